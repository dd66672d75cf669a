package io.sluice.spark;

import io.sluice.spark.Protocol.Key;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.expressions.DynamicPruningSubquery;
import org.apache.spark.sql.catalyst.expressions.EqualTo;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.optimizer.BooleanSimplification$;
import org.apache.spark.sql.catalyst.optimizer.PruneFilters$;
import org.apache.spark.sql.catalyst.optimizer.PushDownPredicates$;
import org.apache.spark.sql.catalyst.plans.logical.Filter;
import org.apache.spark.sql.catalyst.plans.logical.Join;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2ScanRelation;
import org.apache.spark.sql.execution.dynamicpruning.CleanupDynamicPruningFilters$;
import org.apache.spark.sql.execution.dynamicpruning.PartitionPruning$;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.DataTypes;
import scala.runtime.AbstractPartialFunction;

/**
 * Spark's dynamic pruning ({@code PartitionPruning}, Spark 4.3) plans a runtime filter on one side
 * of a join only when the other side keeps a likely-selective {@code Filter} in Spark's plan (or is
 * a local relation); statistics do not make a side qualify. A Sluice scan whose selective filters
 * were all pushed EXACT keeps no {@code Filter}, so a star join with a Sluice dimension read the
 * whole fact table.
 *
 * <p>This rule (one of the session's {@code spark.experimental.extraOptimizations}, added by
 * {@link #install}; they run after Spark's own dynamic pruning) hands Spark's own rules the plan
 * they would have seen had the source not evaluated those filters: each such scan under a
 * {@code Filter} (a placeholder: Spark may have pruned the filtered columns from the read), then
 * {@code PartitionPruning}, the placeholders taken out again (from the runtime filters' subqueries
 * too), then the batches Spark runs after dynamic pruning ({@code PushDownPredicates},
 * {@code CleanupDynamicPruningFilters}, {@code BooleanSimplification}, {@code PruneFilters}). Whether a runtime filter is planned,
 * and whether it runs (by default only when it reuses the side's broadcast), stays Spark's decision,
 * under Spark's {@code spark.sql.optimizer.dynamicPartitionPruning.*} settings. Which scans had a
 * likely-selective EXACT filter is the planner's answer ({@code selective_exact},
 * sluice/planner/runtime.py). Rows never change: no placeholder is left, and a runtime filter only
 * removes rows the join drops. A query in which Spark already planned a runtime filter is left as
 * it is.
 */
public final class SelectiveScans extends Rule<LogicalPlan> {
  /** The placeholder: a comparison (likely selective to Spark), never left in a plan. */
  private static final Expression PLACEHOLDER = new EqualTo(
      Literal.create("sluice: filters pushed EXACT", DataTypes.StringType),
      Literal.create("sluice: filters pushed EXACT", DataTypes.StringType));

  /** Adds the rule to {@code session}'s extra optimizations (once). */
  @SuppressWarnings("unchecked")  // appended keeps the Seq's kind: immutable, as Scala types it
  public static synchronized void install(SparkSession session) {
    scala.collection.immutable.Seq<Rule<LogicalPlan>> rules = session.experimental().extraOptimizations();
    if (!rules.exists(rule -> rule instanceof SelectiveScans)) {
      Object added = rules.appended(new SelectiveScans());
      session.experimental().extraOptimizations_$eq((scala.collection.immutable.Seq<Rule<LogicalPlan>>) added);
    }
  }

  private static boolean selective(LogicalPlan node) {
    return node instanceof DataSourceV2ScanRelation relation && relation.scan() instanceof SluiceScan scan
        && scan.plan().path(Key.SELECTIVE_EXACT).asBoolean(false);
  }

  private static boolean pruned(LogicalPlan plan) {
    return plan.exists(node -> node.expressions().exists(e -> e.exists(x -> x instanceof DynamicPruningSubquery)));
  }

  @Override
  public LogicalPlan apply(LogicalPlan plan) {
    if (!SQLConf.get().dynamicPartitionPruningEnabled() || !plan.exists(node -> node instanceof Join)
        || !plan.exists(SelectiveScans::selective) || pruned(plan)) {
      return plan;
    }
    LogicalPlan marked = plan.transformUp(new AbstractPartialFunction<LogicalPlan, LogicalPlan>() {
      @Override
      public boolean isDefinedAt(LogicalPlan node) {
        return selective(node);
      }

      @Override
      public LogicalPlan apply(LogicalPlan node) {
        return new Filter(PLACEHOLDER, node);
      }
    });
    LogicalPlan found = PartitionPruning$.MODULE$.apply(marked).transformUpWithSubqueries(
        new AbstractPartialFunction<LogicalPlan, LogicalPlan>() {
          @Override
          public boolean isDefinedAt(LogicalPlan node) {
            return node instanceof Filter filter && filter.condition().equals(PLACEHOLDER);
          }

          @Override
          public LogicalPlan apply(LogicalPlan node) {
            return ((Filter) node).child();
          }
        });
    if (!pruned(found)) {
      return plan;
    }
    LogicalPlan pushed = found;
    for (int i = 0; i < 100; i++) {  // Spark's "Pushdown Filters from PartitionPruning" batch: to a fixed point
      LogicalPlan next = PushDownPredicates$.MODULE$.apply(pushed);
      if (next.fastEquals(pushed)) {
        break;
      }
      pushed = next;
    }
    // Spark's "Cleanup filters that cannot be pushed down" batch
    return PruneFilters$.MODULE$.apply(BooleanSimplification$.MODULE$.apply(CleanupDynamicPruningFilters$.MODULE$.apply(pushed)));
  }
}
