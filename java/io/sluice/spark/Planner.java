package io.sluice.spark;

import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;

/**
 * Sluice's planner, implemented in Python: a py4j callback object in a PySpark driver, else a
 * planner process beside the JVM ({@link ProcessPlanner}).
 *
 * <p>One method, JSON in and JSON out, so the transport is one seam (docs/architecture.md).
 * Every pushdown decision is the answer of a call here; the Java classes only carry requests
 * and answers.
 */
public interface Planner {
  /** Answer {@code method} for {@code request} (JSON); the answer is JSON with either the result or {@code error}. */
  String call(String method, String request);

  /**
   * Write {@code data} (Spark's INSERT or CTAS query, on the driver) to the table {@code request}
   * names; the answer is JSON as for {@link #call}. A DataFrame cannot travel as JSON: the
   * planner process refuses it.
   */
  String write(String request, Dataset<Row> data);
}
