package io.sluice.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.spark.Protocol.Key;
import io.sluice.spark.Protocol.Method;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import org.apache.spark.api.python.SimplePythonFunction;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.execution.datasources.v2.python.UserDefinedPythonDataSource;
import org.apache.spark.util.CollectionAccumulator;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.analysis.NoSuchNamespaceException;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;

/**
 * The driver's one link to Sluice's Python planner: a static slot the Python side fills
 * ({@code sluice.spark.bridge.install}), else, in a driver without Python, a planner process
 * ({@link ProcessPlanner}); and a call that turns the planner's typed errors into Spark's exceptions.
 */
public final class Bridge {
  static final ObjectMapper JSON = new ObjectMapper();
  private static volatile Planner planner;
  /** The planner of a driver where no Python registered one (started on its first request). */
  private static final ProcessPlanner PROCESS = new ProcessPlanner();

  private Bridge() {}

  /** Called from Python once per driver process (again after a restart of the callback server). */
  public static void register(Planner implementation) {
    planner = implementation;
  }

  public static boolean isRegistered() {
    return planner != null;
  }

  static ObjectNode request() {
    return JSON.createObjectNode();
  }

  private static Planner planner() {
    Planner current = planner;
    return current != null ? current : PROCESS;
  }

  /**
   * Register the reader (the Python data source planned scans are read through) in {@code session},
   * as {@code spark.dataSource.register} does in a PySpark driver: the planner process pickles the
   * class, and Spark's Python workers, run with the planner's Python, read with it.
   */
  static void registerReader(SparkSession session) {
    JsonNode answer = callUnchecked(Method.READER_SOURCE, request());
    byte[] pickled = java.util.Base64.getDecoder().decode(answer.path(Key.DATA_SOURCE).asText());
    CollectionAccumulator<byte[]> accumulator = session.sparkContext().collectionAccumulator();
    SimplePythonFunction function = new SimplePythonFunction(pickled, new HashMap<>(), new ArrayList<>(),
        ProcessPlanner.python(), answer.path(Key.PYTHON_VERSION).asText(), new ArrayList<>(), accumulator);
    session.sessionState().dataSourceManager().registerDataSource(SluiceScan.READER, new UserDefinedPythonDataSource(function));
  }

  /** Have the planner write {@code data} to the table the request names (see {@link Planner#write}). */
  static void write(ObjectNode request, Dataset<Row> data) {
    Planner current = planner();
    String answer;
    try {
      answer = current.write(JSON.writeValueAsString(request), data);
    } catch (RuntimeException error) {
      throw new SluiceException("the Sluice planner failed on '" + Method.WRITE + "': " + error.getMessage(), error);
    } catch (Exception error) {
      throw new SluiceException("cannot encode a request to the Sluice planner: " + error.getMessage(), error);
    }
    try {
      answered(Method.WRITE, request, answer);
    } catch (NoSuchTableException | NoSuchNamespaceException error) {
      throw new SluiceException(error.getMessage(), error);
    }
  }

  /**
   * Ask the planner; its {@code error} answers become Spark's exceptions, and an answer without a
   * key the protocol requires fails here, naming the method and the key.
   */
  static JsonNode call(String method, ObjectNode request) throws NoSuchTableException, NoSuchNamespaceException {
    Planner current = planner();
    String answer;
    try {
      answer = current.call(method, JSON.writeValueAsString(request));
    } catch (RuntimeException error) {
      throw new SluiceException("the Sluice planner failed on '" + method + "': " + error.getMessage(), error);
    } catch (Exception error) {
      throw new SluiceException("cannot encode a request to the Sluice planner: " + error.getMessage(), error);
    }
    return answered(method, request, answer);
  }

  private static JsonNode answered(String method, ObjectNode request, String answer)
      throws NoSuchTableException, NoSuchNamespaceException {
    if (answer == null) {
      throw new SluiceException("the Sluice planner gave no answer to '" + method + "' (its Python process may be gone)");
    }
    JsonNode node;
    try {
      node = JSON.readTree(answer);
    } catch (Exception error) {
      throw new SluiceException("unreadable answer from the Sluice planner to '" + method + "'", error);
    }
    JsonNode error = node.get(Key.ERROR);
    if (error != null) {
      String kind = error.path(Key.KIND).asText("error");
      String message = error.path(Key.MESSAGE).asText("");
      if (kind.equals("no_such_table")) {
        StringBuilder relation = new StringBuilder();
        if (request.hasNonNull(Key.CATALOG)) {
          relation.append(quoted(request.get(Key.CATALOG).asText())).append('.');
        }
        for (String part : strings(error.path(Key.NAMESPACE))) {
          relation.append(quoted(part)).append('.');
        }
        throw Bridge.<RuntimeException>unchecked(new TableNotFound(relation.append(quoted(error.path(Key.NAME).asText())).toString(), message));
      }
      if (kind.equals("no_such_namespace")) {
        throw new NoSuchNamespaceException(strings(error.path(Key.NAMESPACE)));
      }
      throw new SluiceException(message);
    }
    for (String key : Protocol.REQUIRED_ANSWER_KEYS.getOrDefault(method, List.of())) {
      if (!node.has(key)) {
        throw new SluiceException("the Sluice planner's answer to '" + method + "' has no key '" + key
            + "' (the protocol: sluice/protocol/schema.json)");
      }
    }
    return node;
  }

  /** Like {@link #call} where Spark's signature allows no checked exception. */
  static JsonNode callUnchecked(String method, ObjectNode request) {
    try {
      return call(method, request);
    } catch (NoSuchTableException | NoSuchNamespaceException error) {
      throw new SluiceException(error.getMessage(), error);
    }
  }

  /** For namespace-level calls, whose Spark signatures declare only NoSuchNamespaceException. */
  static JsonNode callForNamespace(String method, ObjectNode request) throws NoSuchNamespaceException {
    try {
      return call(method, request);
    } catch (NoSuchTableException error) {
      throw new SluiceException(error.getMessage(), error);
    }
  }

  /**
   * Throws {@code error} although it is checked and the caller's signature does not declare it:
   * Spark declares only NoSuchTableException on loadTable, and swallows that one.
   */
  @SuppressWarnings("unchecked")
  private static <E extends Throwable> E unchecked(Throwable error) throws E {
    throw (E) error;
  }

  private static String quoted(String name) {
    return "`" + name.replace("`", "``") + "`";
  }

  static String[] strings(JsonNode array) {
    String[] out = new String[array.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = array.get(i).asText();
    }
    return out;
  }
}
