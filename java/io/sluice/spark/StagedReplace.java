package io.sluice.spark;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.spark.Protocol.Key;
import java.util.Collections;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.StagedTable;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.types.StructType;

/**
 * {@code REPLACE TABLE [AS SELECT]}, {@code CREATE OR REPLACE TABLE ... AS SELECT},
 * {@code DataFrameWriterV2.replace()/createOrReplace()}: the new table exists only as this
 * handle until its rows are written. The write is one planner request of mode {@code replace}
 * carrying the new table's schema, partitioning and properties ({@code create}), so the planner
 * drops the old table, creates the new one and loads its rows in one step of the source
 * (docs/writes.md): a failed statement leaves the old table as it was. A replace without rows
 * ({@code REPLACE TABLE} without a query) sends the same request with no rows at commit.
 */
final class StagedReplace extends SluiceTable implements StagedTable {
  /** The new table as a CREATE TABLE request would name it (schema, partitioning, properties). */
  private final ObjectNode create;
  private final StructType newSchema;
  /** Whether Spark wrote the rows (the planner has replaced the table) before committing. */
  private boolean written;

  StagedReplace(SourceRef source, Identifier ident, StructType schema, ObjectNode create) {
    super(source, described(ident, schema), ident);
    this.create = create;
    this.newSchema = schema;
  }

  private static ObjectNode described(Identifier ident, StructType schema) {
    ObjectNode described = Bridge.request();
    described.put(Key.NAME, ident.name());
    try {
      described.set(Key.SCHEMA, Bridge.JSON.readTree(schema.json()));
    } catch (com.fasterxml.jackson.core.JsonProcessingException error) {
      throw new SluiceException("Spark's schema of " + ident + " is not JSON: " + error.getMessage(), error);
    }
    described.putArray(Key.PARTITIONING);
    return described;
  }

  @Override
  public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
    return new SluiceWrite(source, ident, this);
  }

  /** The planner request replacing the table: the CREATE TABLE fields, mode {@code replace}. */
  ObjectNode request() {
    ObjectNode request = create.deepCopy();
    request.put(Key.MODE, "replace");
    return request;
  }

  /** Replace the table with {@code data}'s rows (Spark's query, lined up with the new schema). */
  void replace(Dataset<Row> data) {
    Bridge.write(request(), data);
    written = true;
  }

  @Override
  public void commitStagedChanges() {
    if (!written) {  // REPLACE TABLE without a query: the new table, empty
      replace(SparkSession.active().createDataFrame(Collections.<Row>emptyList(), newSchema));
    }
  }

  /** No driver metrics: the planner logs the rows written. */
  @Override
  public org.apache.spark.sql.connector.metric.CustomTaskMetric[] reportDriverMetrics() {
    return new org.apache.spark.sql.connector.metric.CustomTaskMetric[0];
  }

  /** Nothing was done to the source unless the replacing write succeeded, and then Spark does not abort. */
  @Override
  public void abortStagedChanges() {}
}
