package io.ticketgate.example;

import io.ticketgate.TicketGate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The same 1,000-on-100 test, seated contest and resale with Spring Data Redis configured for the
 * 3-master cluster.
 */
@EnabledIfEnvironmentVariable(named = "TICKETGATE_TEST_CLUSTER", matches = ".+")
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ClusterParticipateTest {
  @LocalServerPort int port;
  @Autowired TicketGate gate;

  @DynamicPropertySource
  static void redis(DynamicPropertyRegistry registry) {
    String nodes = System.getenv("TICKETGATE_TEST_CLUSTER");
    registry.add("spring.data.redis.cluster.nodes", () -> nodes == null ? "127.0.0.1:1" : nodes);
  }

  @Test
  void thousandUsersOnHundredTickets() throws Exception {
    ParticipateConcurrencyTest.assertContest(gate, port);
  }

  @Test
  void partiesOnAVenue() throws Exception {
    SeatedContest.assertContest(gate, port);
  }

  @Test
  void aListedTicketGoesToOneBuyerAtFaceValue() throws Exception {
    ResaleContest.assertContest(gate, port);
  }
}
