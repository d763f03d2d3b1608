import { installLogCapture } from './capture-logs';

// Every test file: the library's log is captured, expected warnings stay quiet, a failed
// test's log is replayed with its failure (see capture-logs.ts).
installLogCapture();
