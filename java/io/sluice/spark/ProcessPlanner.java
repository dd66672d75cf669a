package io.sluice.spark;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.internal.SQLConf;

/**
 * Sluice's planner for a driver with no Python of its own (the spark-sql shell, the Thrift or
 * Spark Connect server): a process, {@code python -m sluice.spark.planner_process}, started on the
 * first request and answering the same JSON messages as the py4j callback, one a line over its
 * stdin and stdout (sluice/spark/planner_process.py).
 *
 * <p>One request at a time: concurrent queries wait for each other's planning calls (reads run
 * on executors and are not affected). The process ends with this JVM: a shutdown hook kills it,
 * and it exits by itself when its stdin closes (the JVM killed outright). When it dies, the
 * request it was answering fails with a {@link SluiceException} that says so, and the next
 * request starts a new one. Which Python runs it: {@code spark.sluice.python}, else
 * {@code PYSPARK_PYTHON}, else {@code python3}; it imports {@code sluice} as that Python finds it.
 */
final class ProcessPlanner implements Planner {
  static final String PYTHON_CONF = "spark.sluice.python";

  private Process process;
  private Writer requests;
  private BufferedReader answers;
  private Thread killer;

  /** The Python the planner process (and the reader's Python workers) run. */
  static String python() {
    String configured = SQLConf.get().getConfString(PYTHON_CONF, "").trim();
    if (!configured.isEmpty()) {
      return configured;
    }
    String environment = System.getenv("PYSPARK_PYTHON");
    return environment != null && !environment.isBlank() ? environment : "python3";
  }

  @Override
  public synchronized String call(String method, String request) {
    if (process != null && !process.isAlive()) {
      stopped();  // ended between requests (killed): a new one answers this one
    }
    if (process == null) {
      start();
    }
    try {
      requests.write(method + "\t" + request + "\n");
      requests.flush();
      String answer = answers.readLine();
      if (answer != null) {
        return answer;
      }
    } catch (IOException error) {
      // the pipe broke: the process is gone, said below
    }
    long pid = process.pid();
    String code = exitCode();
    stopped();
    throw new SluiceException("the Sluice planner process (" + python() + " -m sluice.spark.planner_process, pid " + pid
        + ") ended while answering '" + method + "'"
        + code + ": this query fails; the next query starts a new planner process (its errors are in the driver's log)");
  }

  /** A DataFrame cannot cross a pipe: writes need the py4j planner of a PySpark driver. */
  @Override
  public String write(String request, Dataset<Row> data) {
    throw new SluiceException("writing to a Sluice catalog needs a PySpark driver (sluice.spark.install(spark)): "
        + "the planner process of a driver without Python plans reads only");
  }

  private void start() {
    List<String> command = List.of(python(), "-m", "sluice.spark.planner_process");
    ProcessBuilder builder = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT);
    try {
      process = builder.start();
    } catch (IOException error) {
      throw new SluiceException("cannot start the Sluice planner process (" + String.join(" ", command) + "): "
          + error.getMessage() + "; set " + PYTHON_CONF + " to a Python with sluice installed", error);
    }
    requests = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
    answers = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    Process started = process;
    killer = new Thread(started::destroyForcibly, "sluice-planner-process-killer");
    Runtime.getRuntime().addShutdownHook(killer);
  }

  private String exitCode() {
    try {
      if (process.waitFor(2, java.util.concurrent.TimeUnit.SECONDS)) {
        int code = process.exitValue();
        // the JVM reports a process ended by a signal as 128 + the signal's number
        return code > 128 ? " (killed by signal " + (code - 128) + ")" : " (exit code " + code + ")";
      }
    } catch (InterruptedException error) {
      Thread.currentThread().interrupt();
    }
    return "";
  }

  /** Forget the process (killed if it still runs): the next request starts another. */
  private void stopped() {
    process.destroyForcibly();
    try {
      Runtime.getRuntime().removeShutdownHook(killer);
    } catch (IllegalStateException shuttingDown) {
      // the JVM is exiting: the hook runs anyway
    }
    process = null;
    requests = null;
    answers = null;
    killer = null;
  }
}
