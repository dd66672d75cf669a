package io.sluice.spark;

/**
 * A failure Sluice's planner reported (a source unreachable, a table changed, a bad option).
 * The message is already masked by the planner: it never holds a password.
 */
public class SluiceException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public SluiceException(String message) {
    super("[SLUICE] " + message);
  }

  public SluiceException(String message, Throwable cause) {
    super("[SLUICE] " + message, cause);
  }
}
