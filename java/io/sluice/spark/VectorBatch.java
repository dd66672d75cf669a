package io.sluice.spark;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.paths.SparkPath$;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.InternalRow$;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.execution.datasources.FilePartition;
import org.apache.spark.sql.execution.datasources.PartitionedFile;
import org.apache.spark.sql.execution.datasources.parquet.ParquetOptions;
import org.apache.spark.sql.execution.datasources.parquet.ParquetReadSupport;
import org.apache.spark.sql.execution.datasources.parquet.ParquetReadSupport$;
import org.apache.spark.sql.execution.datasources.parquet.ParquetUtils;
import org.apache.spark.sql.execution.datasources.parquet.ParquetWriteSupport$;
import org.apache.spark.sql.execution.datasources.v2.parquet.ParquetPartitionReaderFactory;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.internal.SQLConf$;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.util.SerializableConfiguration;
import org.apache.spark.util.SerializableConfiguration$;

/**
 * A lake scan read by Spark's own vectorised Parquet reader: the byte ranges of the row groups
 * the planner kept (sluice/lake/vectorised.py), read with {@link ParquetPartitionReaderFactory}
 * and no pushed filter (Spark's Parquet filter pushdown is not NaN-safe; every conjunct of such a
 * scan is INEXACT, so Spark filters the rows). Files are grouped by the names they hold the
 * table's fields under (found by field id): one reader factory per group, each reading the
 * file's names into the scan's columns by position. Nothing is decided here.
 */
final class VectorBatch implements Batch {
  private final JsonNode vector;
  private final StructType schema;

  VectorBatch(JsonNode vector, StructType schema) {
    this.vector = vector;
    this.schema = schema;
  }

  /** Whether Spark's reader returns columnar batches for this schema (as ParquetPartitionReaderFactory decides). */
  static boolean columnar(StructType schema) {
    SQLConf conf = SQLConf.get();
    return conf.parquetVectorizedReaderEnabled() && conf.wholeStageEnabled()
        && ParquetUtils.isBatchReadSupportedForSchema(conf, schema)
        && schema.fields().length <= conf.wholeStageMaxNumFields();
  }

  @Override
  public InputPartition[] planInputPartitions() {
    JsonNode planned = vector.path("partitions");
    InputPartition[] partitions = new InputPartition[planned.size()];
    for (int i = 0; i < partitions.length; i++) {
      JsonNode files = planned.get(i).path("files");
      PartitionedFile[] split = new PartitionedFile[files.size()];
      for (int f = 0; f < split.length; f++) {
        JsonNode file = files.get(f);
        split[f] = new PartitionedFile(InternalRow$.MODULE$.empty(),
            SparkPath$.MODULE$.fromPathString(file.get(0).asText()), file.get(1).asLong(), file.get(2).asLong(),
            new String[0], 0L, file.get(3).asLong(), scala.collection.immutable.Map$.MODULE$.empty());
      }
      partitions[i] = new VectorPartition(planned.get(i).path("group").asInt(), new FilePartition(i, split));
    }
    return partitions;
  }

  @Override
  public PartitionReaderFactory createReaderFactory() {
    SparkSession session = SparkSession.active();
    SQLConf conf = SQLConf.get();
    JsonNode names = vector.path("names");
    ParquetPartitionReaderFactory[] factories = new ParquetPartitionReaderFactory[names.size()];
    Map<String, String> options = new HashMap<>();
    // dates and timestamps read in the proleptic Gregorian calendar, as pyarrow (the Python reader) reads them
    options.put("datetimeRebaseMode", "CORRECTED");
    options.put("int96RebaseMode", "CORRECTED");
    // a file missing or unreadable at read time fails the query, whatever the session says (never fewer rows)
    options.put("ignoreMissingFiles", "false");
    options.put("ignoreCorruptFiles", "false");
    scala.collection.immutable.Map<String, String> scalaOptions =
        scala.collection.immutable.Map$.MODULE$.from(scala.jdk.javaapi.CollectionConverters.asScala(options));
    for (int g = 0; g < factories.length; g++) {
      StructType held = held(names.get(g));
      Configuration hadoop = session.sessionState().newHadoopConf();
      String json = held.json();
      hadoop.set("parquet.read.support.class", ParquetReadSupport.class.getName());
      hadoop.set(ParquetReadSupport$.MODULE$.SPARK_ROW_REQUESTED_SCHEMA(), json);
      hadoop.set(ParquetWriteSupport$.MODULE$.SPARK_ROW_SCHEMA(), json);
      hadoop.set(SQLConf$.MODULE$.SESSION_LOCAL_TIMEZONE().key(), conf.sessionLocalTimeZone());
      hadoop.setBoolean(SQLConf$.MODULE$.NESTED_SCHEMA_PRUNING_ENABLED().key(), conf.nestedSchemaPruningEnabled());
      // the planner named each column as the file holds it: match names exactly, never by field id metadata
      hadoop.setBoolean(SQLConf$.MODULE$.CASE_SENSITIVE().key(), true);
      hadoop.setBoolean(SQLConf$.MODULE$.PARQUET_FIELD_ID_READ_ENABLED().key(), false);
      hadoop.setBoolean(SQLConf$.MODULE$.PARQUET_BINARY_AS_STRING().key(), false);
      hadoop.setBoolean(SQLConf$.MODULE$.PARQUET_INT96_AS_TIMESTAMP().key(), conf.isParquetINT96AsTimestamp());
      hadoop.setBoolean(SQLConf$.MODULE$.PARQUET_INFER_TIMESTAMP_NTZ_ENABLED().key(), conf.parquetInferTimestampNTZEnabled());
      hadoop.setBoolean(SQLConf$.MODULE$.LEGACY_PARQUET_NANOS_AS_LONG().key(), conf.legacyParquetNanosAsLong());
      hadoop.setBoolean(SQLConf$.MODULE$.TIMESTAMP_NANOS_TYPES_ENABLED().key(), conf.timestampNanosTypesEnabled());
      hadoop.setBoolean(SQLConf$.MODULE$.PARQUET_READER_RESPECT_UNKNOWN_TYPE_ANNOTATION().key(),
          conf.parquetReaderRespectUnknownTypeAnnotation());
      Broadcast<SerializableConfiguration> broadcast =
          SerializableConfiguration$.MODULE$.broadcast(session.sparkContext(), hadoop);
      factories[g] = new ParquetPartitionReaderFactory(conf, broadcast, held, held, new StructType(),
          new Filter[0], scala.Option.empty(), new ParquetOptions(scalaOptions, conf));
    }
    return new VectorFactory(factories, columnar(schema), vector.path("table").asText(),
        vector.path("snapshot").asText());
  }

  /** The scan's columns under the names one group of files holds them by. */
  private StructType held(JsonNode names) {
    StructField[] fields = schema.fields();
    StructField[] renamed = new StructField[fields.length];
    for (int i = 0; i < fields.length; i++) {
      renamed[i] = new StructField(names.get(i).asText(), fields[i].dataType(), true,
          org.apache.spark.sql.types.Metadata.empty());
    }
    return new StructType(renamed);
  }

  /** Throws {@code error} unchanged, checked or not (Spark's readers throw undeclared SparkExceptions). */
  @SuppressWarnings("unchecked")
  static <E extends Throwable> RuntimeException rethrow(Throwable error) throws E {
    throw (E) error;
  }

  /** One Spark partition: byte ranges of files of one group. */
  static final class VectorPartition implements InputPartition {
    final int group;
    final FilePartition files;

    VectorPartition(int group, FilePartition files) {
      this.group = group;
      this.files = files;
    }

    @Override
    public String[] preferredLocations() {
      return files.preferredLocations();
    }
  }

  /** Reads a partition with its group's factory; a failed read names the table, its snapshot and the file. */
  static final class VectorFactory implements PartitionReaderFactory {
    private final ParquetPartitionReaderFactory[] factories;
    private final boolean columnar;
    private final String table;
    private final String snapshot;

    VectorFactory(ParquetPartitionReaderFactory[] factories, boolean columnar, String table, String snapshot) {
      this.factories = factories;
      this.columnar = columnar;
      this.table = table;
      this.snapshot = snapshot;
    }

    @Override
    public boolean supportColumnarReads(InputPartition partition) {
      return columnar;
    }

    @Override
    public PartitionReader<InternalRow> createReader(InputPartition partition) {
      VectorPartition part = (VectorPartition) partition;
      return new Named<>(factories[part.group].createReader(part.files), this, part);
    }

    @Override
    public PartitionReader<ColumnarBatch> createColumnarReader(InputPartition partition) {
      VectorPartition part = (VectorPartition) partition;
      return new Named<>(factories[part.group].createColumnarReader(part.files), this, part);
    }

    /** A missing file as Sluice's error naming the table; anything else as it was. */
    Throwable named(Throwable error, VectorPartition part) {
      for (Throwable cause = error; cause != null; cause = cause.getCause()) {
        boolean missing = cause instanceof FileNotFoundException
            || (cause instanceof org.apache.spark.SparkThrowable spark
                && "FAILED_READ_FILE.FILE_NOT_EXIST".equals(spark.getCondition()));
        if (missing) {
          return new SluiceException("lake table " + table + " (snapshot " + snapshot + "): a data file is missing "
              + "(deleted after the scan was planned?): the query fails rather than return fewer rows: "
              + cause.getMessage() + " (files of this partition: " + paths(part) + ")", error);
        }
      }
      return error;
    }

    private static String paths(VectorPartition part) {
      StringBuilder text = new StringBuilder();
      for (PartitionedFile file : part.files.files()) {
        if (text.length() > 0) {
          text.append(", ");
        }
        text.append(file.urlEncodedPath());
      }
      return text.toString();
    }
  }

  /** A partition reader whose failures name the lake table (and a missing file). */
  static final class Named<T> implements PartitionReader<T> {
    private final PartitionReader<T> inner;
    private final VectorFactory factory;
    private final VectorPartition part;

    Named(PartitionReader<T> inner, VectorFactory factory, VectorPartition part) {
      this.inner = inner;
      this.factory = factory;
      this.part = part;
    }

    @Override
    public boolean next() throws IOException {
      try {
        return inner.next();
      } catch (Exception error) {  // Spark's reader throws SparkException (checked) undeclared
        throw VectorBatch.<RuntimeException>rethrow(factory.named(error, part));
      }
    }

    @Override
    public T get() {
      return inner.get();
    }

    @Override
    public void close() throws IOException {
      inner.close();
    }
  }
}
