package io.sluice.spark;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.EnumSet;
import java.util.Set;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/** A described remote table: its Spark schema and the planner's handle to it. */
final class SluiceTable implements SupportsRead {
  final SourceRef source;
  /** The planner's description: {@code name}, {@code schema} (Spark's JSON form), {@code handle} (passed back as it is). */
  final JsonNode described;
  private final StructType schema;

  SluiceTable(SourceRef source, JsonNode described) {
    this.source = source;
    this.described = described;
    this.schema = (StructType) DataType.fromJson(described.path("schema").toString());
  }

  @Override
  public String name() {
    return described.path("name").asText();
  }

  @Override
  @SuppressWarnings("deprecation")  // columns() derives from it; the schema is what the planner describes
  public StructType schema() {
    return schema;
  }

  @Override
  public Set<TableCapability> capabilities() {
    return EnumSet.of(TableCapability.BATCH_READ);
  }

  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
    return new SluiceScanBuilder(this);
  }
}
