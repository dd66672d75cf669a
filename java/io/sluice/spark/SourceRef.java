package io.sluice.spark;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.spark.Protocol.Key;
import java.util.Collections;
import java.util.Map;
import org.apache.spark.sql.internal.SQLConf;
import java.util.TreeMap;

/**
 * Which attached source a request is about: the catalog's name and its options. The
 * options may hold a password: the planner needs it to log in, masks it in every message,
 * and the reader receives it in the option Spark redacts in plans and logs.
 */
final class SourceRef {
  /** Session setting: a folder where each read of a scan planned now records rows and bytes (explain analyze). */
  static final String METRICS_CONF = "spark.sluice.metricsDir";

  final String catalog;
  final Map<String, String> options;
  /** False on the reference path: nothing pushed, every column read. */
  final boolean pushdown;

  SourceRef(String catalog, Map<String, String> options, boolean pushdown) {
    this.catalog = catalog;
    this.options = Collections.unmodifiableMap(new TreeMap<>(options));
    this.pushdown = pushdown;
  }

  SourceRef withPushdown(boolean enabled) {
    return new SourceRef(catalog, options, enabled);
  }

  String password() {
    return options.get("password");
  }

  /** A request naming this source (``catalog`` is null for a DataFrame reader's options). */
  ObjectNode request() {
    ObjectNode node = Bridge.request();
    node.put(Key.CATALOG, catalog);
    node.put(Key.SESSION_ZONE, SQLConf.get().sessionLocalTimeZone());
    node.put(Key.ANSI, SQLConf.get().ansiEnabled());
    // which reader reads lake scans (sluice/lake/vectorised.py): auto, vectorised or python
    node.put(Key.LAKE_READER, SQLConf.get().getConfString("spark.sluice.lakeReader", "auto"));
    node.put(Key.LAKE_VECTORISED_FRACTION, SQLConf.get().getConfString("spark.sluice.lakeVectorisedFraction", "0"));
    node.put(Key.SMALL_READ_ROWS, SQLConf.get().getConfString("spark.sluice.smallReadRows", "10000"));
    String metrics = SQLConf.get().getConfString(METRICS_CONF, "");
    if (!metrics.isEmpty()) {
      node.put(Key.METRICS_DIR, metrics);
    }
    ObjectNode opts = node.putObject(Key.OPTIONS);
    for (Map.Entry<String, String> entry : options.entrySet()) {
      opts.put(entry.getKey(), entry.getValue());
    }
    return node;
  }
}
