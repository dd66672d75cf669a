package io.sluice.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.spark.Protocol.Key;
import io.sluice.spark.Protocol.Method;
import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import java.util.OptionalLong;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.FieldReference$;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.metric.CustomMetric;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.Statistics;
import org.apache.spark.sql.connector.read.SupportsReportStatistics;
import org.apache.spark.sql.connector.read.SupportsRuntimeV2Filtering;
import org.apache.spark.sql.execution.datasources.DataSource$;
import org.apache.spark.sql.execution.datasources.v2.python.PythonDataSourceReadInfo;
import org.apache.spark.sql.execution.datasources.v2.python.PythonDataSourceV2;
import org.apache.spark.sql.execution.datasources.v2.python.PythonInputPartition;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.internal.connector.SupportsMetadata;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A planned scan: what EXPLAIN shows (the remote query and every verdict), the statistics
 * Spark plans joins with, and the read, which is the Python data source's, fed the plan.
 *
 * <p>Runtime filtering: when Spark joins this scan with a selective, broadcast side, it hands
 * the join keys it found ({@code key IN (...)}) to {@link #filter} before reading; the planner
 * plans the scan again with them (bounded: a long list becomes a range) and the read follows
 * the new plan. Spark still joins, so a key the source cannot filter by is simply read.
 */
final class SluiceScan implements Scan, SupportsReportStatistics, SupportsRuntimeV2Filtering, SupportsMetadata {
  /** Short name of the Python data source that reads planned scans (sluice/spark/datasource.py). */
  static final String READER = "sluice_reader";

  private final SluiceTable table;
  private final StructType schema;
  /** The request the plan answered: a runtime filter plans it again with the join's keys. */
  private final ObjectNode request;
  private volatile JsonNode plan;
  private Scan reader;
  /**
   * Why {@link #reader} could not be made (its planner died, the source failed), thrown again when
   * the same execution asks once more: Spark swallows the first failure, met when it asks for the
   * metrics for the UI (SQLExecution's plan info), and without this the query would plan its read a
   * second time and hide the failure. A later execution (the DataFrame collected again) tries anew.
   */
  private RuntimeException readerFailed;
  /** The execution {@link #readerFailed} happened in ({@code spark.sql.execution.id}). */
  private String failedExecution;
  /** Whether the planner expects {@link #reader}'s plan to return few rows (read by the driver). */
  private boolean small;
  /** The batch made last: its plan is the one runtime filters left (see SluiceBatch#createReaderFactory). */
  private volatile SluiceBatch latest;

  /** A copy-on-write operation's scan: it reads whole files, so it takes no runtime filter. */
  private final boolean wholeFiles;

  SluiceScan(SluiceTable table, StructType schema, ObjectNode request, JsonNode plan, boolean wholeFiles) {
    this.table = table;
    this.schema = schema;
    this.request = request;
    this.plan = plan;
    this.wholeFiles = wholeFiles;
  }

  /** The planner's answer this scan was built from (what Federation.plan reads back). */
  JsonNode plan() {
    return plan;
  }

  @Override
  public NamedReference[] filterAttributes() {
    if (wholeFiles) {
      return new NamedReference[0];
    }
    JsonNode columns = plan.path(Key.RUNTIME_COLUMNS);
    NamedReference[] references = new NamedReference[columns.size()];
    for (int i = 0; i < references.length; i++) {
      references[i] = FieldReference$.MODULE$.column(columns.get(i).asText());
    }
    return references;
  }

  @Override
  public synchronized void filter(Predicate[] predicates) {
    ObjectNode again = request.deepCopy();
    // Spark planned this scan's columnar mode with its reader: the re-planned read keeps that reader
    if (plan.hasNonNull(Key.READER)) {
      again.put(Key.LAKE_READER, plan.path(Key.READER).asText());
    }
    ArrayNode offered = again.putArray(Key.RUNTIME);
    for (Predicate predicate : predicates) {
      offered.add(Expressions.toJson(predicate));
    }
    plan = Bridge.callUnchecked(Method.PLAN, again);
    reader = null;  // the read follows the new plan
    readerFailed = null;
  }

  @Override
  public StructType readSchema() {
    return schema;
  }

  @Override
  public String description() {
    return plan.path(Key.DESCRIPTION).asText();
  }

  /** EXPLAIN FORMATTED's keys, one a line (PushedFilters, PushedAggregates, RemoteQuery, ...: sluice/planner/metadata.py). */
  @Override
  public scala.collection.immutable.Map<String, String> getMetaData() {
    Map<String, String> keys = new HashMap<>();
    plan.path(Key.METADATA).fields().forEachRemaining(field -> keys.put(field.getKey(), field.getValue().asText()));
    return scala.collection.immutable.Map$.MODULE$.from(CollectionConverters.asScala(keys));
  }

  @Override
  public Statistics estimateStatistics() {
    JsonNode rows = plan.path(Key.ROWS);
    JsonNode bytes = plan.path(Key.BYTES);
    OptionalLong numRows = rows.isNumber() ? OptionalLong.of(rows.asLong()) : OptionalLong.empty();
    OptionalLong sizeInBytes = bytes.isNumber() ? OptionalLong.of(bytes.asLong()) : OptionalLong.empty();
    return new Statistics() {
      @Override
      public OptionalLong sizeInBytes() {
        return sizeInBytes;
      }

      @Override
      public OptionalLong numRows() {
        return numRows;
      }
    };
  }

  /** The Python data source's scan of this plan, made once (Spark asks for metrics before the batch). */
  private synchronized Scan reader() {
    String execution = org.apache.spark.sql.SparkSession.active().sparkContext()
        .getLocalProperty(org.apache.spark.sql.execution.SQLExecution.EXECUTION_ID_KEY());
    if (readerFailed != null && execution != null && execution.equals(failedExecution)) {
      throw readerFailed;
    }
    try {
      return newReader();
    } catch (RuntimeException error) {
      readerFailed = error;
      failedExecution = execution;
      throw error;
    }
  }

  /** {@link #reader}, made on the first call. */
  private Scan newReader() {
    if (reader == null) {
      org.apache.spark.sql.classic.SparkSession session =
          (org.apache.spark.sql.classic.SparkSession) org.apache.spark.sql.SparkSession.active();
      if (!Bridge.isRegistered() && !session.sessionState().dataSourceManager().dataSourceExists(READER)) {
        Bridge.registerReader(session);  // no PySpark driver registered it: the planner process gives it
      }
      scala.Option<TableProvider> provider = DataSource$.MODULE$.lookupDataSourceV2(READER, SQLConf.get());
      if (provider.isEmpty()) {
        throw new SluiceException("the Python data source '" + READER + "' is not registered in this session: "
            + "call sluice.spark.install(spark)");
      }
      Map<String, String> options = new HashMap<>();
      options.put("scan", plan.path(Key.SCAN).asText());
      String url = table.source.options.get("url");
      if (url != null) {
        options.put("url", url);  // the reader logs in with a password given inside the URL
      }
      String password = table.source.password();
      if (password != null) {
        options.put("password", password);  // redacted by Spark in plans and logs
      }
      if (provider.get() instanceof PythonDataSourceV2 python) {
        python.setReadInfo(readInfo());
      }
      SupportsRead inner = (SupportsRead) provider.get().getTable(schema, new Transform[0], options);
      reader = inner.newScanBuilder(new CaseInsensitiveStringMap(options)).build();
    }
    return reader;
  }

  /**
   * The read function and partitions, planned by the driver's Python (the catalog's planner has
   * the source open), in the form Spark's planning worker would have sent them.
   */
  private PythonDataSourceReadInfo readInfo() {
    ObjectNode request = table.source.request();
    request.put(Key.SCAN, plan.path(Key.SCAN).asText());
    request.put(Key.SCHEMA, schema.json());
    request.put(Key.MAX_BATCH_ROWS, SQLConf.get().arrowMaxRecordsPerBatch());
    request.put(Key.BINARY_AS_BYTES, SQLConf.get().pysparkBinaryAsBytes());
    request.put(Key.SMALL_ROWS, smallRows());
    JsonNode answer = Bridge.callUnchecked(Method.READ, request);
    small = answer.path(Key.SMALL).asBoolean(false);
    byte[] info = Base64.getDecoder().decode(answer.path(Key.READ_INFO).asText());
    return PythonDataSourceReadInfo.receive(new DataInputStream(new ByteArrayInputStream(info)));
  }

  /** {@code spark.sluice.smallReadRows}: the most rows a scan may be expected to return for the driver to read it (0: never). */
  private static long smallRows() {
    return Long.parseLong(SQLConf.get().getConfString("spark.sluice.smallReadRows", "10000").trim());
  }

  /** Whether the planner chose Spark's vectorised Parquet reader for this lake scan (sluice/lake/vectorised.py). */
  private boolean vectorised() {
    return "vectorised".equals(plan.path(Key.READER).asText());
  }

  @Override
  public synchronized Batch toBatch() {
    if (vectorised()) {
      latest = null;
      return new VectorBatch(plan.path(Key.VECTOR), schema);
    }
    Scan python = reader();
    SluiceBatch batch = new SluiceBatch(this, python, python.toBatch(), small);
    latest = batch;
    return batch;
  }

  SluiceBatch latest() {
    return latest;
  }

  /** Asks the planner to read a small scan's one partition here on the driver (see SluiceBatch). */
  JsonNode fetch(InputPartition partition) {
    ObjectNode request = table.source.request();
    request.put(Key.SCAN, plan.path(Key.SCAN).asText());
    request.put(Key.SCHEMA, schema.json());
    request.put(Key.MAX_BATCH_ROWS, SQLConf.get().arrowMaxRecordsPerBatch());
    request.put(Key.PARTITION, Base64.getEncoder().encodeToString(((PythonInputPartition) partition).pickedPartition()));
    return Bridge.callUnchecked(Method.FETCH, request);
  }

  /**
   * Row-based whichever way a Python partition is read (asking Spark to decide per partition
   * would plan the read while EXPLAIN runs); columnar when Spark's vectorised Parquet reader
   * reads the scan and returns batches for its columns.
   */
  @Override
  public ColumnarSupportMode columnarSupportMode() {
    return vectorised() && VectorBatch.columnar(schema) ? ColumnarSupportMode.SUPPORTED : ColumnarSupportMode.UNSUPPORTED;
  }

  @Override
  public CustomMetric[] supportedCustomMetrics() {
    return vectorised() ? new CustomMetric[0] : reader().supportedCustomMetrics();
  }
}
