// Jest's node environment, plus one flag a test's afterEach hooks can read: did this test fail?
// test/support/capture-logs.ts replays a failed test's captured library log with it.
const { TestEnvironment } = require('jest-environment-node');

const FLAG = '__ackqTestFailed';

class FailureAwareEnvironment extends TestEnvironment {
  handleTestEvent(event) {
    if (event.name === 'test_start') this.global[FLAG] = false;
    // Circus reports the test's own failure before the afterEach hooks run.
    if (event.name === 'test_fn_failure' && !event.test.failing) this.global[FLAG] = true;
    if (event.name === 'hook_failure' && ['beforeEach', 'afterEach'].includes(event.hook.type))
      this.global[FLAG] = true;
  }
}

module.exports = FailureAwareEnvironment;
