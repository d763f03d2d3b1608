// The message states a topic's tabs and counts show, and where each one's count is in gauges().

export const STATES = ['ready', 'delayed', 'leased', 'waiting-children', 'dead', 'completed'];

const GAUGE = { 'waiting-children': 'waitingChildren' };

/** The count of a state in a topic's gauges (`waiting-children` is `waitingChildren` there). */
export const gaugeOf = (gauges, state) => gauges[GAUGE[state] ?? state];
