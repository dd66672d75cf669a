package io.sluice.spark;

import java.util.List;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.OverwritePartitionsDynamic;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.connector.write.V1Write;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.SparkStrategy;
import org.apache.spark.sql.execution.datasources.v2.AppendDataExecV1;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;
import scala.runtime.BoxedUnit;

/**
 * Plans {@code INSERT OVERWRITE} in dynamic mode ({@code spark.sql.sources.partitionOverwriteMode=dynamic},
 * or {@code DataFrameWriterV2.overwritePartitions()}) of a lake table on Spark's V1 write fallback.
 *
 * <p>Spark plans its dynamic overwrite only as a V2 batch write (executors handing rows to a
 * {@code DataWriter}), while Sluice's writes hand the query as a DataFrame to the Python
 * pipeline ({@link SluiceWrite}). This strategy, installed in the session's extra strategies
 * by {@code sluice.spark.install}, plans that one node the way Spark plans an append to a V1
 * fallback table: the write, built by {@link SluiceWrite#overwriteDynamicPartitions}, carries
 * the mode, and the planner replaces the partitions the rows touch. Every other plan is Spark's.
 */
public final class OverwritePartitions extends SparkStrategy {
  private final SparkSession session;

  private OverwritePartitions(SparkSession session) {
    this.session = session;
  }

  /** Put the strategy first among {@code session}'s extra strategies (once per session). */
  public static void install(SparkSession session) {
    Seq<SparkStrategy> current = session.experimental().extraStrategies();
    if (CollectionConverters.asJava(current).stream().anyMatch(s -> s instanceof OverwritePartitions)) {
      return;
    }
    java.util.List<SparkStrategy> strategies = new java.util.ArrayList<>();
    strategies.add(new OverwritePartitions(session));
    strategies.addAll(CollectionConverters.asJava(current));
    session.experimental().extraStrategies_$eq(CollectionConverters.asScala(strategies).toList());
  }

  @Override
  public Seq<SparkPlan> apply(LogicalPlan plan) {
    if (plan instanceof OverwritePartitionsDynamic overwrite
        && overwrite.table() instanceof DataSourceV2Relation relation
        && relation.table() instanceof SluiceTable table
        && overwrite.write().isDefined()
        && overwrite.write().get() instanceof V1Write write) {
      scala.Function0<BoxedUnit> refreshCache = () -> {
        session.sharedState().cacheManager().recacheByPlan(session, relation);
        return BoxedUnit.UNIT;
      };
      SparkPlan exec = new AppendDataExecV1(table, overwrite.query(), refreshCache, write);
      return CollectionConverters.asScala(List.of(exec)).toList();
    }
    return CollectionConverters.asScala(List.<SparkPlan>of()).toList();
  }
}
