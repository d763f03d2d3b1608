/** Any thrown value as an Error (handlers may reject with strings or plain objects). */
export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(describeThrown(error));
}

/** The error's name, message and the top of its stack: enough to debug a dead letter, bounded in size. */
export function errorText(error: unknown): string {
  if (error === undefined) return '';
  if (!(error instanceof Error)) return describeThrown(error).slice(0, 2000);
  const stack = (error.stack ?? '').split('\n').slice(1, 6).join('\n');
  return `${error.name}: ${error.message}${stack ? `\n${stack}` : ''}`.slice(0, 2000);
}

/**
 * A thrown value that is not an Error, as text: primitives as they are, objects only by their
 * kind (`[object Object]`), never their content, which may hold payload data.
 */
function describeThrown(value: unknown): string {
  if (typeof value === 'object' && value !== null) return Object.prototype.toString.call(value);
  return String(value);
}

/** The error's name and the first line of its message, bounded: what a log line says of a failure. */
export function errorSummary(error: unknown): string {
  const failure = asError(error);
  const line = failure.message.split('\n')[0];
  return `${failure.name}: ${line.length > 300 ? `${line.slice(0, 300)}...` : line}`;
}

/**
 * A rejected value as an error keeps it (`error.value`, `error.id`...): a primitive as given, an
 * object or function not at all, since it may hold payloads, headers or credentials that
 * `util.inspect(error)` would print.
 */
export function keptValue(value: unknown): unknown {
  return value === null || (typeof value !== 'object' && typeof value !== 'function') ? value : undefined;
}
