package io.sluice.spark;

import com.fasterxml.jackson.databind.JsonNode;
import io.sluice.spark.Protocol.Key;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.SupportsRowLevelOperations;
import org.apache.spark.sql.connector.expressions.FieldReference;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.write.DeltaWrite;
import org.apache.spark.sql.connector.write.DeltaWriteBuilder;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.RowLevelOperation;
import org.apache.spark.sql.connector.write.RowLevelOperationBuilder;
import org.apache.spark.sql.connector.write.RowLevelOperationInfo;
import org.apache.spark.sql.connector.write.SupportsDelta;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * A writable SQL table with a primary key: Spark rewrites {@code UPDATE} and {@code MERGE INTO}
 * on it into a {@code WriteDelta} whose query (Spark's own: conditions, SET expressions, the
 * MERGE cardinality check) computes the delta rows, identified by the key ({@link SupportsDelta#rowId}).
 * {@link RowLevelWrites} plans that node on the V1 fallback, and the planner applies the delta in
 * one transaction of the source (sluice/write/delta.py). Lake tables are {@link SluiceLakeTable}.
 */
final class SluiceRowLevelTable extends SluiceTable implements SupportsRowLevelOperations {
  SluiceRowLevelTable(SourceRef source, JsonNode described, Identifier ident) {
    super(source, described, ident);
  }

  /** The row id: the primary key's columns, in key order. */
  String[] rowIdNames() {
    return Bridge.strings(described.path(Key.ROW_ID));
  }

  /**
   * With a row id, Spark has already rewritten {@code DELETE} into a delta by the key, and asks
   * here whether the source can run it itself instead: yes when every conjunct is EXACT for it
   * (sluice/planner/deletes.py {@code can_delete}); otherwise Spark keeps its rewrite, which
   * evaluates the whole condition and deletes the rows it selects by their key. Without one,
   * {@link #deleteWhere} decides (and refuses what the source cannot run exactly).
   */
  @Override
  public boolean canDeleteWhere(Predicate[] predicates) {
    if (rowIdNames().length == 0) {
      return super.canDeleteWhere(predicates);
    }
    JsonNode answer = Bridge.callUnchecked(Protocol.Method.CAN_DELETE, deleteRequest(predicates));
    notPushed = answer.path(Key.REASON).asText("");
    return answer.path(Key.PUSHED).asBoolean();
  }

  /**
   * Why the DELETE Spark last asked {@link #canDeleteWhere} about is not the source's own (empty:
   * it is, or none was asked): EXPLAIN shows it beside Spark's row-level rewrite. Spark asks while
   * it optimises the statement, on the table it then plans, which the catalog loads per statement.
   */
  volatile String notPushed = "";

  /**
   * UPDATE and MERGE: a delta by the row id, or, on a table without one, the planner's refusal
   * (no primary key, a read-only source), raised while Spark analyses the statement, before any
   * row is read. DELETE on such a table is a plain operation Spark hands to {@link #deleteWhere}.
   */
  @Override
  public RowLevelOperationBuilder newRowLevelOperationBuilder(RowLevelOperationInfo info) {
    RowLevelOperation.Command command = info.command();
    if (rowIdNames().length > 0) {
      return () -> new Delta(this, command);
    }
    if (command != RowLevelOperation.Command.DELETE) {
      String statement = command == RowLevelOperation.Command.MERGE ? "MERGE INTO" : "UPDATE";
      throw new SluiceException(statement + " " + name() + ": " + described.path(Key.ROW_LEVEL_REFUSED).asText()
          + "; nothing was changed");
    }
    SluiceRowLevelTable table = this;
    return () -> new RowLevelOperation() {
      @Override
      public RowLevelOperation.Command command() {
        return command;
      }

      @Override
      public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
        return table.newScanBuilder(options);
      }

      @Override
      public org.apache.spark.sql.connector.write.WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
        throw new SluiceException("DELETE FROM " + table.name() + ": the condition must be one Spark hands to "
            + "the source (" + described.path(Key.ROW_LEVEL_REFUSED).asText() + ")");
      }
    };
  }

  /** One UPDATE, MERGE or DELETE on the table: read through Sluice's scan, written as a delta by the key. */
  static final class Delta implements SupportsDelta {
    final SluiceRowLevelTable table;
    private final RowLevelOperation.Command command;

    Delta(SluiceRowLevelTable table, RowLevelOperation.Command command) {
      this.table = table;
      this.command = command;
    }

    @Override
    public RowLevelOperation.Command command() {
      return command;
    }

    @Override
    public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
      return table.newScanBuilder(options);
    }

    @Override
    public NamedReference[] rowId() {
      String[] names = table.rowIdNames();
      NamedReference[] out = new NamedReference[names.length];
      for (int i = 0; i < names.length; i++) {
        out[i] = FieldReference.column(names[i]);
      }
      return out;
    }

    @Override
    public DeltaWriteBuilder newWriteBuilder(LogicalWriteInfo info) {
      Delta operation = this;
      return new DeltaWriteBuilder() {
        @Override
        public DeltaWrite build() {
          return new Write(operation);
        }
      };
    }
  }

  /** The delta's write: only a marker for {@link RowLevelWrites}, which plans it on the V1 fallback. */
  static final class Write implements DeltaWrite {
    final Delta operation;

    Write(Delta operation) {
      this.operation = operation;
    }

    @Override
    public String description() {
      return "SluiceDelta(" + operation.table.name() + ")";
    }

    /** Reached only when the session lacks Sluice's strategy (Spark would run the delta on executors). */
    @Override
    public org.apache.spark.sql.connector.write.DeltaBatchWrite toBatch() {
      throw new SluiceException(operation.command + " of " + operation.table.name() + " needs Sluice's planning "
          + "strategy in this Spark session: call sluice.spark.install(spark) (Federation does) before the statement");
    }
  }
}
