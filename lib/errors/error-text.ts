/** Any thrown value as an Error (handlers may reject with strings or plain objects). */
export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/** The error's name, message and the top of its stack: enough to debug a dead letter, bounded in size. */
export function errorText(error: unknown): string {
  if (error === undefined) return '';
  if (!(error instanceof Error)) return String(error).slice(0, 2000);
  const stack = (error.stack ?? '').split('\n').slice(1, 6).join('\n');
  return `${error.name}: ${error.message}${stack ? `\n${stack}` : ''}`.slice(0, 2000);
}

/** The error's name and the first line of its message, bounded: what a log line says of a failure. */
export function errorSummary(error: unknown): string {
  const failure = asError(error);
  const line = failure.message.split('\n')[0];
  return `${failure.name}: ${line.length > 300 ? `${line.slice(0, 300)}...` : line}`;
}
