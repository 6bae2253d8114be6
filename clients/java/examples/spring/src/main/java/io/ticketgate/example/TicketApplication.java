package io.ticketgate.example;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.cluster.RedisClusterClient;
import io.ticketgate.LettuceTicketGate;
import io.ticketgate.TicketGate;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The reference design's ticket service on ticketgate: Spring Boot configures Spring Data Redis
 * (standalone, cluster or Sentinel, from {@code spring.data.redis.*}); the gate runs on its Lettuce
 * client.
 */
@SpringBootApplication
public class TicketApplication {

  public static void main(String[] args) {
    SpringApplication.run(TicketApplication.class, args);
  }

  /** A gate with a connection of its own from Spring Data Redis's Lettuce client. */
  @Bean(destroyMethod = "close")
  TicketGate ticketGate(LettuceConnectionFactory redis) {
    redis.start(); // idempotent: the client exists once the factory has started
    AbstractRedisClient client = redis.getRequiredNativeClient();
    if (client instanceof RedisClusterClient cluster) {
      return LettuceTicketGate.create(cluster);
    }
    return LettuceTicketGate.create((RedisClient) client);
  }
}
