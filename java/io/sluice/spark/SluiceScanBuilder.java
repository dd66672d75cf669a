package io.sluice.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.spark.Protocol.Key;
import io.sluice.spark.Protocol.Method;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.connector.expressions.SortOrder;
import org.apache.spark.sql.connector.expressions.aggregate.Aggregation;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.connector.join.JoinType;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.SupportsPushDownAggregates;
import org.apache.spark.sql.connector.read.SupportsPushDownJoin;
import org.apache.spark.sql.connector.read.SupportsPushDownLimit;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.connector.read.SupportsPushDownTopN;
import org.apache.spark.sql.connector.read.SupportsPushDownV2Filters;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;

/**
 * Spark's pushdown negotiation for one scan, answered by the Python planner.
 *
 * <p>Filters: each conjunct Spark offers is classified by the planner. EXACT ones are
 * pushed and not returned; INEXACT ones are pushed and returned (Spark re-applies them);
 * UNSUPPORTED ones are returned only. Limits and top-N are recorded and accepted as
 * <em>partially</em> pushed, so Spark always applies its own LIMIT and sort on top: whether
 * the source applies them too is the planner's decision when the scan is built, and either
 * answer gives Spark's rows. Aggregates are pushed completely or not at all (the planner's
 * {@code aggregate} answer; see sluice/planner/aggregates.py). A join of this scan with another
 * Sluice scan is the planner's {@code join} decision (sluice/planner/joins.py): once pushed, this
 * builder reads the joined query and every later request carries the join. Everything decided so
 * far travels in the requests; nothing is kept between calls on the Python side.
 */
final class SluiceScanBuilder implements ScanBuilder, SupportsPushDownV2Filters, SupportsPushDownRequiredColumns,
    SupportsPushDownLimit, SupportsPushDownTopN, SupportsPushDownAggregates, SupportsPushDownJoin {
  private final SluiceTable table;
  private Predicate[] pushed = new Predicate[0];
  /** The planner's verdicts for the conjuncts Spark offered, as it answered them. */
  private JsonNode verdicts;
  /** Per offered conjunct, whether Spark's dynamic pruning would call it likely selective (planner/runtime.py). */
  private JsonNode selective;
  private StructType required;
  private Integer limit;
  private ArrayNode order;
  /** The planner's answers to the aggregations Spark offered, by their JSON (Spark asks up to four times). */
  private final Map<String, JsonNode> aggregateAnswers = new HashMap<>();
  /** The last aggregation offered (EXPLAIN says why it was not pushed) and the one pushed. */
  private ObjectNode offeredAggregation;
  private ObjectNode pushedAggregation;
  /**
   * The AVG functions Spark offered. Declined, Spark rewrites each into a plain SUM and COUNT of the
   * same argument and offers again: every offer carries them ({@code "averaged"}), so the planner
   * holds such a SUM to Spark's AVG (which adds doubles), not to its SUM.
   */
  private final ArrayNode averaged = Bridge.JSON.createArrayNode();
  /** The planner's answer to the join pushed into this scan, or to the last one it refused (EXPLAIN says why). */
  private JsonNode pushedJoin;
  private JsonNode refusedJoin;

  /**
   * A copy-on-write operation's scan ({@link SluiceLakeTable}): every row of every file read, so no
   * filter is pushed (Spark's offers prune nothing and come back whole) and no runtime filter is taken.
   */
  private final boolean wholeFiles;

  SluiceScanBuilder(SluiceTable table) {
    this(table, false);
  }

  SluiceScanBuilder(SluiceTable table, boolean wholeFiles) {
    this.table = table;
    this.required = table.schema();
    this.wholeFiles = wholeFiles;
  }

  private ObjectNode request() {
    ObjectNode request = table.source.request();
    request.set(Key.TABLE, table.described.path(Key.HANDLE));
    if (pushedJoin != null) {
      request.set(Key.JOIN, pushedJoin.path(Key.JOIN));
      request.set(Key.JOIN_VERDICTS, pushedJoin.path(Key.VERDICTS));
    }
    return request;
  }

  /** One side of an offered join, as the planner reads it: its table, pushed filters and the columns Spark needs. */
  private ObjectNode side(SupportsPushDownJoin.ColumnWithAlias[] columns) {
    ObjectNode side = Bridge.JSON.createObjectNode();
    side.put(Key.CATALOG, table.source.catalog);
    side.set(Key.TABLE, table.described.path(Key.HANDLE));
    side.set(Key.VERDICTS, verdicts != null ? verdicts : Bridge.JSON.createArrayNode());
    if (pushedJoin != null) {
      side.set(Key.JOIN, pushedJoin.path(Key.JOIN));
    }
    ArrayNode names = side.putArray(Key.COLUMNS);
    for (SupportsPushDownJoin.ColumnWithAlias column : columns) {
      ObjectNode named = names.addObject();
      named.put(Key.NAME, column.colName());
      named.put(Key.ALIAS, column.alias());
    }
    return side;
  }

  /** Any two Sluice scans: whether their source runs the join is the planner's answer to {@link #pushDownJoin}. */
  @Override
  public boolean isOtherSideCompatibleForJoin(SupportsPushDownJoin other) {
    return table.source.pushdown && other instanceof SluiceScanBuilder that && that.table.source.pushdown;
  }

  @Override
  public boolean pushDownJoin(SupportsPushDownJoin other, JoinType joinType, SupportsPushDownJoin.ColumnWithAlias[] leftColumns,
      SupportsPushDownJoin.ColumnWithAlias[] rightColumns, Predicate condition) {
    if (!(other instanceof SluiceScanBuilder that) || !isOtherSideCompatibleForJoin(other)) {
      return false;
    }
    ObjectNode request = table.source.request();
    request.set(Key.LEFT, side(leftColumns));
    request.set(Key.RIGHT, that.side(rightColumns));
    request.put(Key.SAME_SOURCE, java.util.Objects.equals(table.source.catalog, that.table.source.catalog)
        && table.source.options.equals(that.table.source.options));
    request.put(Key.JOIN_TYPE, joinType.name());
    request.set(Key.CONDITION, Expressions.toJson(condition));
    JsonNode answer = Bridge.callUnchecked(Method.JOIN, request);
    if (!answer.path(Key.PUSHED).asBoolean()) {
      refusedJoin = answer;
      return false;
    }
    pushedJoin = answer;
    refusedJoin = null;
    required = (StructType) DataType.fromJson(answer.path(Key.READ_SCHEMA).toString());
    return true;
  }

  @Override
  public Predicate[] pushPredicates(Predicate[] predicates) {
    if (wholeFiles || !table.source.pushdown || predicates.length == 0 || pushedJoin != null) {
      return predicates;
    }
    ObjectNode request = request();
    ArrayNode offered = request.putArray(Key.PREDICATES);
    for (Predicate predicate : predicates) {
      offered.add(Expressions.toJson(predicate));
    }
    JsonNode answer = Bridge.callUnchecked(Method.FILTERS, request);
    verdicts = answer.path(Key.VERDICTS);
    selective = answer.path(Key.SELECTIVE);
    if (verdicts.size() != predicates.length) {
      throw new SluiceException("the planner answered " + verdicts.size() + " verdicts for " + predicates.length + " filters");
    }
    List<Predicate> kept = new ArrayList<>();
    List<Predicate> postScan = new ArrayList<>();
    for (int i = 0; i < predicates.length; i++) {
      String level = verdicts.get(i).path("level").asText();
      if (!level.equals("UNSUPPORTED")) {
        kept.add(predicates[i]);
      }
      if (!level.equals("EXACT")) {
        postScan.add(predicates[i]);
      }
    }
    pushed = kept.toArray(new Predicate[0]);
    return postScan.toArray(new Predicate[0]);
  }

  @Override
  public Predicate[] pushedPredicates() {
    return pushed;
  }

  /**
   * Read only the columns the query uses, pushdown on or off: pruning changes no value and no
   * row, and a reference read of every column failed on a value in a column the query never uses.
   */
  @Override
  public void pruneColumns(StructType requiredSchema) {
    required = requiredSchema;
  }

  @Override
  public boolean pushLimit(int n) {
    if (!table.source.pushdown) {
      return false;
    }
    limit = n;
    return true;
  }

  @Override
  public boolean pushTopN(SortOrder[] orders, int n) {
    if (!table.source.pushdown) {
      return false;
    }
    ArrayNode keys = Bridge.JSON.createArrayNode();
    for (SortOrder sortOrder : orders) {
      keys.add(Expressions.sortOrder(sortOrder));
    }
    order = keys;
    limit = n;
    return true;
  }

  /** The aggregation as the planner reads it, with the AVG functions offered so far on this scan. */
  private ObjectNode offer(Aggregation aggregation) {
    ObjectNode offered = Expressions.aggregation(aggregation);
    for (JsonNode function : offered.path("aggregates")) {
      if (function.path("fn").asText().equals("AVG") && !contains(averaged, function)) {
        averaged.add(function);
      }
    }
    if (!averaged.isEmpty()) {
      offered.set("averaged", averaged.deepCopy());
    }
    return offered;
  }

  private static boolean contains(ArrayNode nodes, JsonNode node) {
    for (JsonNode each : nodes) {
      if (each.equals(node)) {
        return true;
      }
    }
    return false;
  }

  private JsonNode aggregateAnswer(Aggregation aggregation) {
    ObjectNode offered = offer(aggregation);
    offeredAggregation = offered;
    return aggregateAnswers.computeIfAbsent(offered.toString(), key -> {
      ObjectNode request = request();
      if (verdicts != null) {
        request.set(Key.VERDICTS, verdicts);
      }
      request.set(Key.AGGREGATION, offered);
      return Bridge.callUnchecked(Method.AGGREGATE, request);
    });
  }

  /** Complete or nothing: the source answers the final groups in one query (never partial sums). */
  @Override
  public boolean supportCompletePushDown(Aggregation aggregation) {
    return table.source.pushdown && aggregateAnswer(aggregation).path(Key.COMPLETE).asBoolean();
  }

  @Override
  public boolean pushAggregation(Aggregation aggregation) {
    if (!supportCompletePushDown(aggregation)) {
      return false;
    }
    pushedAggregation = offer(aggregation);
    return true;
  }

  /** Spark keeps its own LIMIT and sort: the planner may still decide not to push them. */
  @Override
  public boolean isPartiallyPushed() {
    return true;
  }

  @Override
  public Scan build() {
    ObjectNode request = request();
    if (verdicts != null) {
      request.set(Key.VERDICTS, verdicts);
      request.set(Key.SELECTIVE, selective);
    }
    ArrayNode columns = request.putArray(Key.COLUMNS);
    for (String column : required.fieldNames()) {
      columns.add(column);
    }
    if (limit != null) {
      request.put(Key.LIMIT, limit);
    }
    if (order != null) {
      request.set(Key.ORDER, order);
    }
    if (pushedAggregation != null) {
      request.set(Key.AGGREGATION, pushedAggregation);
    } else if (offeredAggregation != null) {
      request.set(Key.AGGREGATION_OFFERED, offeredAggregation);
    }
    if (refusedJoin != null) {
      request.set(Key.JOIN_REFUSED, refusedJoin);
    }
    request.put(Key.PUSHDOWN, table.source.pushdown);
    // how many splits Spark's own Parquet reader would aim for (a lake scan it reads)
    request.put(Key.PARALLELISM, org.apache.spark.sql.SparkSession.active().sparkContext().defaultParallelism());
    JsonNode plan = Bridge.callUnchecked(Method.PLAN, request);
    // what the planner reads: the columns Spark asked for (one when it asked for none: count(*)),
    // or the grouping keys and aggregates when they were pushed
    StructType read = (StructType) DataType.fromJson(plan.path(Key.READ_SCHEMA).toString());
    return new SluiceScan(table, read, request, plan, wholeFiles);
  }
}
