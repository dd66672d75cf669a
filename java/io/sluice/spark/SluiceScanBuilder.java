package io.sluice.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.connector.expressions.SortOrder;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.SupportsPushDownLimit;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.connector.read.SupportsPushDownTopN;
import org.apache.spark.sql.connector.read.SupportsPushDownV2Filters;
import org.apache.spark.sql.types.StructType;

/**
 * Spark's pushdown negotiation for one scan, answered by the Python planner.
 *
 * <p>Filters: each conjunct Spark offers is classified by the planner. EXACT ones are
 * pushed and not returned; INEXACT ones are pushed and returned (Spark re-applies them);
 * UNSUPPORTED ones are returned only. Limits and top-N are recorded and accepted as
 * <em>partially</em> pushed, so Spark always applies its own LIMIT and sort on top: whether
 * the source applies them too is the planner's decision when the scan is built, and either
 * answer gives Spark's rows. Everything decided so far travels in the requests; nothing is
 * kept between calls on the Python side.
 */
final class SluiceScanBuilder implements ScanBuilder, SupportsPushDownV2Filters, SupportsPushDownRequiredColumns,
    SupportsPushDownLimit, SupportsPushDownTopN {
  private final SluiceTable table;
  private Predicate[] pushed = new Predicate[0];
  /** The planner's verdicts for the conjuncts Spark offered, as it answered them. */
  private JsonNode verdicts;
  private StructType required;
  private Integer limit;
  private ArrayNode order;

  SluiceScanBuilder(SluiceTable table) {
    this.table = table;
    this.required = table.schema();
  }

  private ObjectNode request() {
    ObjectNode request = table.source.request();
    request.set("table", table.described.path("handle"));
    return request;
  }

  @Override
  public Predicate[] pushPredicates(Predicate[] predicates) {
    if (!table.source.pushdown || predicates.length == 0) {
      return predicates;
    }
    ObjectNode request = request();
    ArrayNode offered = request.putArray("predicates");
    for (Predicate predicate : predicates) {
      offered.add(Expressions.toJson(predicate));
    }
    JsonNode answer = Bridge.callUnchecked("filters", request);
    verdicts = answer.path("verdicts");
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

  @Override
  public void pruneColumns(StructType requiredSchema) {
    if (table.source.pushdown) {
      required = requiredSchema;
    }
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

  /** Spark keeps its own LIMIT and sort: the planner may still decide not to push them. */
  @Override
  public boolean isPartiallyPushed() {
    return true;
  }

  @Override
  public Scan build() {
    ObjectNode request = request();
    if (verdicts != null) {
      request.set("verdicts", verdicts);
    }
    ArrayNode columns = request.putArray("columns");
    for (String column : required.fieldNames()) {
      columns.add(column);
    }
    if (limit != null) {
      request.put("limit", limit);
    }
    if (order != null) {
      request.set("order", order);
    }
    request.put("pushdown", table.source.pushdown);
    JsonNode plan = Bridge.callUnchecked("plan", request);
    // the columns the planner reads: those Spark asked for, or one when it asked for none (count(*))
    StructType read = new StructType();
    for (JsonNode column : plan.path("columns")) {
      read = read.add(table.schema().apply(column.asText()));
    }
    return new SluiceScan(table, read, plan);
  }
}
