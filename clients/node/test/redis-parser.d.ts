/** Types for redis-parser 3 (ioredis's RESP2 parser), as the vector tests use it. */
declare module "redis-parser" {
  interface Options {
    returnReply(reply: unknown): void;
    returnError(err: Error): void;
    returnBuffers?: boolean;
    stringNumbers?: boolean;
  }
  class RedisParser {
    constructor(options: Options);
    execute(data: Buffer): void;
  }
  export = RedisParser;
}
