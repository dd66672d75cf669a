package io.sluice.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.spark.Protocol.Key;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.SupportsRowLevelOperations;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.RowLevelOperation;
import org.apache.spark.sql.connector.write.RowLevelOperationBuilder;
import org.apache.spark.sql.connector.write.RowLevelOperationInfo;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * A lake table looked up by name: Spark rewrites {@code UPDATE} and {@code MERGE INTO} on it into a
 * group-based {@code ReplaceData} (copy-on-write). The operation's scan reads every row of every data
 * file of the snapshot the table was described at (pinned in the handle; no filter pushed, no runtime
 * filter, so each file read is read whole), Spark's query computes those files' new content with its
 * own semantics (conditions, SET expressions, the MERGE cardinality check), and {@link RowLevelWrites}
 * hands it to the planner, which replaces exactly that snapshot's files in one snapshot
 * (sluice/lake/row_level.py). {@code DELETE} is rewritten the same way, and Spark's optimizer turns it
 * back into {@link SluiceTable#deleteWhere} whenever it can translate the condition (always but for a
 * subquery and the like): only those reach the copy-on-write write.
 */
final class SluiceLakeTable extends SluiceTable implements SupportsRowLevelOperations {
  SluiceLakeTable(SourceRef source, JsonNode described, Identifier ident) {
    super(source, described, ident);
  }

  /** The snapshot the operation reads and replaces files of (null: the table has none yet). */
  Long snapshotId() {
    JsonNode id = described.path(Key.SNAPSHOT_ID);
    return id.isIntegralNumber() ? id.asLong() : null;
  }

  /** This table with {@link #snapshotId} pinned in its handle, as a time travel pins it. */
  private SluiceTable pinned() {
    ObjectNode copy = described.deepCopy();
    Long id = snapshotId();
    if (id != null) {
      ((ObjectNode) copy.path(Key.HANDLE).path(Key.TABLE)).put("snapshot", id.longValue());
    }
    return new SluiceTable(source, copy, ident);
  }

  @Override
  public RowLevelOperationBuilder newRowLevelOperationBuilder(RowLevelOperationInfo info) {
    RowLevelOperation.Command command = info.command();
    return () -> new CopyOnWrite(this, command);
  }

  /** One UPDATE, MERGE or DELETE: a whole-file read of the pinned snapshot, written as those files' replacement. */
  static final class CopyOnWrite implements RowLevelOperation {
    final SluiceLakeTable table;
    final RowLevelOperation.Command command;

    CopyOnWrite(SluiceLakeTable table, RowLevelOperation.Command command) {
      this.table = table;
      this.command = command;
    }

    @Override
    public RowLevelOperation.Command command() {
      return command;
    }

    @Override
    public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
      return new SluiceScanBuilder(table.pinned(), true);
    }

    @Override
    public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
      CopyOnWrite operation = this;
      return new WriteBuilder() {
        @Override
        public org.apache.spark.sql.connector.write.Write build() {
          return new Write(operation);
        }
      };
    }
  }

  /** The replacement's write: only a marker for {@link RowLevelWrites}, which plans it on the V1 fallback. */
  static final class Write implements org.apache.spark.sql.connector.write.Write {
    final CopyOnWrite operation;

    Write(CopyOnWrite operation) {
      this.operation = operation;
    }

    @Override
    public String description() {
      return "SluiceCopyOnWrite(" + operation.table.name() + ")";
    }

    /** Reached only when the session lacks Sluice's strategy (Spark would write the files on executors). */
    @Override
    public org.apache.spark.sql.connector.write.BatchWrite toBatch() {
      throw new SluiceException(operation.command + " of " + operation.table.name() + " needs Sluice's planning "
          + "strategy in this Spark session: call sluice.spark.install(spark) (Federation does) before the statement");
    }
  }
}
