// Preload that puts this process' wall clock ACKQ_CLOCK_SKEW_MS milliseconds off (negative:
// behind), as on a host whose clock is wrong:
//   ACKQ_CLOCK_SKEW_MS=-300000 node --require ./test/support/skew-clock.js consumer.js
// Date.now(), new Date() and Date() are shifted; dates built from a value, Date.parse and
// Date.UTC are not. Monotonic clocks stay true (performance.now, process.hrtime, timers), as
// they do on such a host. Node's own internals keep the true time (they hold the original Date).
// Used instead of libfaketime so that the clock-skew fault test needs nothing but Node.
'use strict';

const offsetMs = Number(process.env.ACKQ_CLOCK_SKEW_MS);
if (
  process.env.ACKQ_CLOCK_SKEW_MS === undefined ||
  process.env.ACKQ_CLOCK_SKEW_MS.trim() === '' ||
  !Number.isFinite(offsetMs)
) {
  throw new Error(
    `skew-clock.js needs ACKQ_CLOCK_SKEW_MS, a number of milliseconds such as -300000 (got ${JSON.stringify(process.env.ACKQ_CLOCK_SKEW_MS)})`,
  );
}

const TrueDate = Date;
const now = () => TrueDate.now() + offsetMs;

function SkewedDate(...args) {
  // Date() called without new returns the current time as a string.
  if (new.target === undefined) return new TrueDate(now()).toString();
  return Reflect.construct(TrueDate, args.length === 0 ? [now()] : args, new.target);
}
// One prototype, so that `instanceof Date` holds for dates made before and after the swap.
SkewedDate.prototype = TrueDate.prototype;
Object.defineProperty(TrueDate.prototype, 'constructor', { value: SkewedDate, writable: true, configurable: true });
SkewedDate.now = now;
SkewedDate.parse = TrueDate.parse;
SkewedDate.UTC = TrueDate.UTC;
Object.defineProperty(SkewedDate, 'name', { value: 'Date' });
Object.defineProperty(SkewedDate, 'length', { value: 7 });

globalThis.Date = SkewedDate;
