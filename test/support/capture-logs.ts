import { ConsoleLogger, Logger, type LoggerService, type LogLevel } from '@nestjs/common';

/** One line that the library (or Nest) logged through Nest's Logger during a test. */
export interface LogLine {
  level: LogLevel;
  context: string;
  message: string;
  /** The test that was running (empty in beforeAll and afterAll). */
  test: string;
}

/**
 * Warnings the harness itself causes in every file: its private servers run without an AOF,
 * so every service's startup check warns once (test/core/preflight.int-spec.ts asserts it).
 */
const HARNESS_EXPECTED: readonly RegExp[] = [/has appendonly off/];

/** Levels that are never printed during a run (a failed test's replay shows them). */
const QUIET: ReadonlySet<LogLevel> = new Set<LogLevel>(['log', 'debug', 'verbose']);

/** Most lines a failed test's replay shows (its last ones). */
const REPLAY_LIMIT = 200;

const currentTest = (): string => expect.getState().currentTestName ?? '';

/**
 * The logger every test file runs with (installed by test/support/jest-setup.ts): it keeps what
 * was logged, prints at once only warnings and errors nobody declared expected, and replays a
 * failed test's whole log after its failure.
 */
class TestLog implements LoggerService {
  /** Lines of the running test (or of the file's setup, between tests). */
  lines: LogLine[] = [];
  readonly fileExpected: RegExp[] = [];
  testExpected: RegExp[] = [];
  readonly collectors = new Set<string[]>();
  private readonly console = new ConsoleLogger();

  log(message: unknown, ...params: unknown[]): void {
    this.write('log', message, params);
  }
  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }
  error(message: unknown, ...params: unknown[]): void {
    this.write('error', message, params);
  }
  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params);
  }
  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }
  verbose(message: unknown, ...params: unknown[]): void {
    this.write('verbose', message, params);
  }

  private write(level: LogLevel, message: unknown, params: unknown[]): void {
    const last = params[params.length - 1];
    const line: LogLine = {
      level,
      context: typeof last === 'string' ? last : '',
      message: text(message),
      test: currentTest(),
    };
    this.lines.push(line);
    for (const collector of this.collectors) collector.push(`${level} ${line.message}`);
    // Printed as the library would print it, naming the test (parallel files interleave).
    if (!this.isExpected(line))
      this.console[level](
        typeof message === 'string' && line.test ? `${message} [in "${line.test}"]` : message,
        ...params,
      );
  }

  private isExpected(line: LogLine): boolean {
    if (QUIET.has(line.level) || this.collectors.size > 0) return true;
    return [...HARNESS_EXPECTED, ...this.fileExpected, ...this.testExpected].some((pattern) =>
      pattern.test(line.message),
    );
  }
}

function text(message: unknown): string {
  if (message instanceof Error) return `${message.name}: ${message.message}`;
  return typeof message === 'string' ? message : String(message);
}

const testLog = new TestLog();

/**
 * Installs the capturing logger around every test of the file (call once, from Jest's
 * setupFilesAfterEnv). Reinstalled before each test, as `NestFactory.create(..., { logger })`
 * and Logger.overrideLogger elsewhere replace it.
 */
export function installLogCapture(): void {
  Logger.overrideLogger(testLog);
  beforeEach(() => {
    Logger.overrideLogger(testLog);
    testLog.lines = [];
  });
  afterEach(() => {
    if ((globalThis as { __ackqTestFailed?: boolean }).__ackqTestFailed) replay(currentTest(), testLog.lines);
    testLog.lines = [];
    testLog.testExpected = [];
  });
}

function replay(test: string, lines: LogLine[]): void {
  const shown = lines.slice(-REPLAY_LIMIT);
  const omitted = lines.length > shown.length ? ` (the last ${shown.length})` : '';
  const body = shown.map((l) => `  ${l.level.toUpperCase().padEnd(7)} [${l.context}] ${l.message}`).join('\n');
  console.log(
    `Library log of the failed test "${test}": ${lines.length} line(s)${omitted}, expected ones included\n${body}`,
  );
}

/**
 * Declares log lines that are caused on purpose: they are kept, not printed. Called inside a
 * test it holds for that test; called at the top of a file or describe (or in beforeAll), for
 * the whole file. Assert the ones that matter with `loggedLines`.
 */
export function expectLogs(...patterns: RegExp[]): void {
  (currentTest() ? testLog.testExpected : testLog.fileExpected).push(...patterns);
}

/** The lines logged so far in the running test, optionally only those matching `pattern`. */
export function loggedLines(pattern?: RegExp): LogLine[] {
  return testLog.lines.filter((line) => !pattern || pattern.test(line.message));
}

/** The logger to hand to NestFactory, so that an app's log goes through the same capture. */
export function testLogger(): LoggerService {
  return testLog;
}

/**
 * Collects everything logged from now until `restore()` as `<level> <message>` strings, for a
 * test that inspects the whole log itself (meanwhile nothing is printed: the test reads it).
 */
export function captureLogs(): { lines: string[]; restore: () => void } {
  const lines: string[] = [];
  testLog.collectors.add(lines);
  return { lines, restore: () => void testLog.collectors.delete(lines) };
}
