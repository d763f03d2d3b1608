// The event lines a test's child process prints (one JSON object a line, read by
// consumer-processes.ts). Written before `say` returns: on Linux, stdout on a pipe is
// asynchronous, and a process SIGKILLed while its reader lags would lose the lines still
// buffered, such as the start and ack of a message it handled, as if never handled.
const stdout = process.stdout._handle;
if (stdout && typeof stdout.setBlocking === 'function') stdout.setBlocking(true);

exports.say = (event) => process.stdout.write(`${JSON.stringify({ pid: process.pid, now: Date.now(), ...event })}\n`);
