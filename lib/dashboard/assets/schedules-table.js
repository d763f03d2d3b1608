// A topic's schedules with their next and last run, "run now" and "remove".
import { api, settings } from './api.js';
import { duration, h, scroller, time } from './dom.js';
import { act } from './feedback.js';

export function scheduleTable(topic, schedules) {
  if (schedules.length === 0) return h('p', { class: 'empty' }, 'No schedule on this topic.');
  const row = (s) =>
    h(
      'tr',
      { 'data-schedule': s.name },
      h('th', { scope: 'row' }, s.name),
      h('td', {}, s.cron ? `cron ${s.cron}${s.tz ? ` (${s.tz})` : ''}` : `every ${duration(s.everyMs)}`),
      h('td', {}, s.nextRunAt === null ? 'none' : time(s.nextRunAt)),
      h('td', {}, time(s.lastRunAt)),
      settings.readOnly
        ? ''
        : h(
            'td',
            {},
            h(
              'button',
              {
                type: 'button',
                'aria-label': `Run ${s.name} now`,
                onclick: () =>
                  act(
                    `Run schedule ${s.name} of ${topic} now? Its next run stays as planned.`,
                    'Run now',
                    () => api.runSchedule(topic, s.name),
                    (r) => `Pushed ${r.id}.`,
                  ),
              },
              'Run now',
            ),
            ' ',
            h(
              'button',
              {
                type: 'button',
                class: 'danger',
                'aria-label': `Remove ${s.name}`,
                onclick: () =>
                  act(
                    `Remove schedule ${s.name} of ${topic}?` +
                      (s.declared
                        ? ' The app declares it: it comes back at its next startup unless removed from the code.'
                        : ''),
                    'Remove schedule',
                    () => api.removeSchedule(topic, s.name),
                    () => `Removed schedule ${s.name}.`,
                  ),
              },
              'Remove',
            ),
          ),
    );
  const head = h(
    'tr',
    {},
    ['Name', 'When', 'Next run', 'Last run'].map((c) => h('th', { scope: 'col' }, c)),
    settings.readOnly ? '' : h('th', { scope: 'col' }, 'Action'),
  );
  return scroller(
    'Schedules',
    h('table', { class: 'grid', id: 'schedules-table' }, h('thead', {}, head), h('tbody', {}, schedules.map(row))),
  );
}
