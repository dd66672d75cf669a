package io.sluice.spark;

/**
 * Sluice's planner, implemented in Python (a py4j callback object on the driver).
 *
 * <p>One method, JSON in and JSON out, so the transport is one seam: a sidecar process
 * serving the same methods over a pipe could stand in for the py4j callback (see
 * docs/architecture.md). Every pushdown decision is the answer of a call here; the Java
 * classes only carry requests and answers.
 */
public interface Planner {
  /** Answer {@code method} for {@code request} (JSON); the answer is JSON with either the result or {@code error}. */
  String call(String method, String request);
}
