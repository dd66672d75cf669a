package io.sluice.spark;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.spark.Protocol.Key;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.ProjectingInternalRow;
import org.apache.spark.sql.catalyst.plans.logical.DeleteFromTableWithFilters;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.ReplaceData;
import org.apache.spark.sql.catalyst.plans.logical.WriteDelta;
import org.apache.spark.sql.catalyst.util.ReplaceDataProjections;
import org.apache.spark.sql.catalyst.util.WriteDeltaProjections;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.connector.write.RowLevelOperation;
import org.apache.spark.sql.connector.write.V1Write;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.SparkStrategy;
import org.apache.spark.sql.execution.datasources.v2.AppendDataExecV1;
import org.apache.spark.sql.execution.datasources.v2.DeleteFromTableExec;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.sources.InsertableRelation;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;
import scala.runtime.BoxedUnit;

/**
 * Plans {@code UPDATE} and {@code MERGE INTO} of a Sluice SQL table, and of a lake table, on Spark's
 * V1 write fallback.
 *
 * <p>Spark rewrites both, on a {@link SluiceRowLevelTable}, into a {@code WriteDelta} whose query
 * computes the delta rows (operation, new row, old row id) with Spark's own semantics, and plans
 * that node only as executors handing rows to a {@code DeltaWriter}. This strategy, installed first
 * among the session's extra strategies (as {@link OverwritePartitions}), plans it as an append on
 * the fallback instead: the query reaches the planner as a DataFrame of {@code op, c0..cN-1,
 * k0..kM-1} (the projections' layout resolved here) in write mode {@code delta}, and the planner
 * applies it in one transaction of the source. On a lake table ({@link SluiceLakeTable}) Spark
 * rewrites them into a {@code ReplaceData} instead, planned the same way: its query (the new
 * content of the files read) reaches the planner in write mode {@code replace-data}.
 *
 * <p>It also plans a {@code DELETE} Spark hands a Sluice table ({@code DeleteFromTableWithFilters})
 * as Spark does, on an {@link ExplainedDelete} of the table, so that EXPLAIN shows the planner's
 * decision for the conditions; the fallback's {@code toString} is the delta's ({@link WriteExplain}).
 */
public final class RowLevelWrites extends SparkStrategy {
  private final SparkSession session;

  private RowLevelWrites(SparkSession session) {
    this.session = session;
  }

  /** Put the strategy first among {@code session}'s extra strategies (once per session). */
  public static void install(SparkSession session) {
    Seq<SparkStrategy> current = session.experimental().extraStrategies();
    if (CollectionConverters.asJava(current).stream().anyMatch(s -> s instanceof RowLevelWrites)) {
      return;
    }
    List<SparkStrategy> strategies = new ArrayList<>();
    strategies.add(new RowLevelWrites(session));
    strategies.addAll(CollectionConverters.asJava(current));
    session.experimental().extraStrategies_$eq(CollectionConverters.asScala(strategies).toList());
  }

  @Override
  public Seq<SparkPlan> apply(LogicalPlan plan) {
    if (plan instanceof WriteDelta delta
        && delta.write().isDefined()
        && delta.write().get() instanceof SluiceRowLevelTable.Write write
        && delta.originalTable() instanceof DataSourceV2Relation relation) {
      SluiceRowLevelTable table = write.operation.table;
      scala.Function0<BoxedUnit> refreshCache = refresh(relation);
      V1Write fallback = new Fallback(table, delta.projections(), write.operation.command());
      SparkPlan exec = new AppendDataExecV1(table, delta.query(), refreshCache, fallback);
      return CollectionConverters.asScala(List.of(exec)).toList();
    }
    if (plan instanceof ReplaceData replace
        && replace.write().isDefined()
        && replace.write().get() instanceof SluiceLakeTable.Write write
        && replace.originalTable() instanceof DataSourceV2Relation relation) {
      SluiceLakeTable table = write.operation.table;
      scala.Function0<BoxedUnit> refreshCache = refresh(relation);
      V1Write fallback = new Replacement(write.operation, replace.projections());
      SparkPlan exec = new AppendDataExecV1(table, replace.query(), refreshCache, fallback);
      return CollectionConverters.asScala(List.of(exec)).toList();
    }
    if (plan instanceof DeleteFromTableWithFilters delete
        && delete.table() instanceof DataSourceV2Relation relation
        && relation.table() instanceof SluiceTable table) {
      scala.Function0<BoxedUnit> refreshCache = refresh(relation);
      Predicate[] predicates = CollectionConverters.asJava(delete.condition()).toArray(new Predicate[0]);
      SparkPlan exec = new DeleteFromTableExec(new ExplainedDelete(table, predicates), predicates, refreshCache,
          delete.options(), DeleteFromTableExec.apply$default$5());
      return CollectionConverters.asScala(List.of(exec)).toList();
    }
    return CollectionConverters.asScala(List.<SparkPlan>of()).toList();
  }

  /** What Spark's own write execs run after a write: the cached plans over the table recomputed. */
  private scala.Function0<BoxedUnit> refresh(DataSourceV2Relation relation) {
    return () -> {
      session.sharedState().cacheManager().recacheByPlan(session, relation);
      return BoxedUnit.UNIT;
    };
  }

  private static int[] ordinals(ProjectingInternalRow projection) {
    List<Object> found = CollectionConverters.asJava(projection.colOrdinals());
    int[] out = new int[found.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = (Integer) found.get(i);
    }
    return out;
  }

  /** Spark's query with its columns renamed by position ({@code sluice_0..}): its own names may repeat. */
  private static Dataset<Row> numbered(Dataset<Row> data) {
    String[] positional = new String[data.columns().length];
    for (int i = 0; i < positional.length; i++) {
      positional[i] = "sluice_" + i;
    }
    return data.toDF(positional);
  }

  /**
   * A lake UPDATE or MERGE handed to the planner: the new content of the files the operation read,
   * in the table's columns (the row projection's ordinals), in write mode {@code replace-data} with
   * the command and the snapshot read.
   */
  private static final class Replacement implements V1Write {
    private final SluiceLakeTable.CopyOnWrite operation;
    private final int[] row;

    Replacement(SluiceLakeTable.CopyOnWrite operation, ReplaceDataProjections projections) {
      this.operation = operation;
      if (projections.metadataProjection().isDefined()) {
        throw new SluiceException("the rewrite of " + operation.table.name() + " carries metadata columns Sluice does not write");
      }
      this.row = ordinals(projections.rowProjection());
    }

    @Override
    public InsertableRelation toInsertableRelation() {
      return (data, overwrite) -> {
        SluiceLakeTable table = operation.table;
        Dataset<Row> numbered = numbered(data);
        String[] positional = numbered.columns();
        org.apache.spark.sql.types.StructField[] fields = table.schema().fields();
        if (fields.length != row.length) {
          throw new SluiceException("the rewrite of " + table.name() + " has " + row.length + " columns, the table "
              + fields.length);
        }
        List<Column> picked = new ArrayList<>();
        for (int i = 0; i < row.length; i++) {
          picked.add(functions.col(positional[row[i]]).as(fields[i].name()));
        }
        ObjectNode request = table.source.request();
        SluiceCatalog.identify(request, table.ident);
        request.put(Key.MODE, "replace-data");
        request.put(Key.COMMAND, operation.command.name());
        Long snapshot = table.snapshotId();
        if (snapshot != null) {
          request.put(Key.SNAPSHOT_ID, snapshot.longValue());
        }
        Bridge.write(request, numbered.select(picked.toArray(new Column[0])));
      };
    }
  }

  /** The delta handed to the planner: Spark's query, its columns picked by the projections' ordinals. */
  private static final class Fallback implements V1Write {
    private final SluiceRowLevelTable table;
    private final int[] row;
    private final int[] rowId;
    private final WriteExplain explained;

    Fallback(SluiceRowLevelTable table, WriteDeltaProjections projections, RowLevelOperation.Command command) {
      this.table = table;
      this.explained = new WriteExplain(() -> {
        ObjectNode request = WriteExplain.request(table.source, table.ident, "delta");
        request.put(Key.COMMAND, command.toString());
        ArrayNode names = request.putArray(Key.ROW_ID);
        for (String name : table.rowIdNames()) {
          names.add(name);
        }
        request.put(Key.NOT_PUSHED, command == RowLevelOperation.Command.DELETE ? table.notPushed : "");
        return request;
      });
      if (projections.metadataProjection().isDefined()) {
        throw new SluiceException("the delta of " + table.name() + " carries metadata columns Sluice does not write");
      }
      this.row = projections.rowProjection().isDefined() ? ordinals(projections.rowProjection().get()) : new int[0];
      this.rowId = ordinals(projections.rowIdProjection());
    }

    /** EXPLAIN's words for the delta: the planner's path, statements and reasons ({@link WriteExplain}). */
    @Override
    public String toString() {
      return explained.toString();
    }

    @Override
    public InsertableRelation toInsertableRelation() {
      return (data, overwrite) -> {
        Dataset<Row> numbered = numbered(data);
        String[] positional = numbered.columns();
        List<Column> picked = new ArrayList<>();
        picked.add(functions.col(positional[0]).as("op"));  // every delta output leads with the operation
        if (row.length > 0) {
          for (int i = 0; i < row.length; i++) {
            picked.add(functions.col(positional[row[i]]).as("c" + i));
          }
        } else {  // a DELETE's delta has no new rows: the same layout, every column NULL
          org.apache.spark.sql.types.StructField[] fields = table.schema().fields();
          for (int i = 0; i < fields.length; i++) {
            picked.add(functions.lit(null).cast(fields[i].dataType()).as("c" + i));
          }
        }
        for (int i = 0; i < rowId.length; i++) {
          picked.add(functions.col(positional[rowId[i]]).as("k" + i));
        }
        ObjectNode request = table.source.request();
        SluiceCatalog.identify(request, table.ident);
        request.put(Key.MODE, "delta");
        ArrayNode names = request.putArray(Key.ROW_ID);
        for (String name : table.rowIdNames()) {
          names.add(name);
        }
        Bridge.write(request, numbered.select(picked.toArray(new Column[0])));
      };
    }
  }
}
