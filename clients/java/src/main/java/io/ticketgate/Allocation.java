package io.ticketgate;

import java.util.Optional;

/**
 * One allocation as {@code TICKET.ALLOCATIONS} reports it (never its key).
 *
 * @param name the allocation's name
 * @param free its tickets not claimed yet
 * @param claimed tickets claimed from it, held or sold
 * @param release unix ms at which it gives its free tickets back to public sale; empty: never
 */
public record Allocation(String name, long free, long claimed, Optional<Long> release) {}
