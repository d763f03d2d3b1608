import type { Figure } from './workloads/context';

/** Every system's figures, in the order the systems ran; the first is this project. */
export type Results = { system: string; figures: Figure[] }[];

export function formatValue(figure: Figure | undefined): string {
  if (!figure || figure.value === undefined || !Number.isFinite(figure.value)) return 'n/a';
  const digits = digitsOf(figure);
  const text = figure.value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
  return figure.note ? `${text} (${figure.note})` : text;
}

/** this project ÷ other, from the numbers as printed (a printed 0 gives no ratio). */
function ratio(ours: Figure | undefined, other: Figure | undefined): string {
  const [a, b] = [ours, other].map((f) => (f?.value === undefined ? NaN : Number(f.value.toFixed(digitsOf(f)))));
  if (!Number.isFinite(a) || !Number.isFinite(b) || b === 0) return '–';
  return `${(a / b).toFixed(2)}×`;
}

function digitsOf(figure: Figure): number {
  return figure.digits ?? (Math.abs(figure.value ?? 0) >= 100 ? 0 : 2);
}

/** One markdown table, padded so it also reads well in a terminal. */
export function renderTable(results: Results): string {
  const [ours, ...others] = results;
  const ids: Figure[] = [];
  for (const { figures } of results) for (const f of figures) if (!ids.some((g) => g.id === f.id)) ids.push(f);
  const find = (figures: Figure[], id: string) => figures.find((f) => f.id === id);
  const header = [
    'metric',
    'better',
    ...results.map((r) => r.system),
    ...others.map((o) => `${ours.system} ÷ ${o.system}`),
  ];
  const rows = ids.map((row) => {
    const mine = find(ours.figures, row.id);
    return [
      row.label,
      row.better,
      ...results.map((r) => formatValue(find(r.figures, row.id))),
      ...others.map((o) => ratio(mine, find(o.figures, row.id))),
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (i < 2 ? `-${'-'.repeat(w)}-` : `-${'-'.repeat(w)}:`)).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

const COLORS = ['#1f6fd1', '#e8702a', '#2e9e44', '#8e44ad'];

/** A hand-written line chart: consume rate (y) against concurrency (x, evenly spaced). */
export function renderChart(results: Results, concurrencies: number[]): string {
  const W = 900;
  const H = 440;
  const m = { left: 80, right: 200, top: 50, bottom: 60 };
  const plotW = W - m.left - m.right;
  const plotH = H - m.top - m.bottom;
  const series = results.map(({ system, figures }) => ({
    system,
    points: concurrencies.map((c) => figures.find((f) => f.id === `conc-${c}`)?.value ?? 0),
  }));
  const top = niceCeiling(Math.max(1, ...series.flatMap((s) => s.points)));
  const x = (i: number) => m.left + (concurrencies.length === 1 ? plotW / 2 : (i * plotW) / (concurrencies.length - 1));
  const y = (v: number) => m.top + plotH - (v / top) * plotH;
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="Helvetica, Arial, sans-serif" font-size="12">`,
  );
  out.push(`<rect width="${W}" height="${H}" fill="#ffffff"/>`);
  out.push(
    `<text x="${W / 2}" y="24" text-anchor="middle" font-size="16" font-weight="bold">Consume rate against concurrency</text>`,
  );
  for (let k = 0; k <= 5; k++) {
    const v = (top * k) / 5;
    out.push(`<line x1="${m.left}" x2="${W - m.right}" y1="${y(v)}" y2="${y(v)}" stroke="#e3e3e3"/>`);
    out.push(
      `<text x="${m.left - 8}" y="${y(v) + 4}" text-anchor="end">${Math.round(v).toLocaleString('en-US')}</text>`,
    );
  }
  out.push(`<line x1="${m.left}" x2="${m.left}" y1="${m.top}" y2="${m.top + plotH}" stroke="#333"/>`);
  out.push(`<line x1="${m.left}" x2="${W - m.right}" y1="${m.top + plotH}" y2="${m.top + plotH}" stroke="#333"/>`);
  concurrencies.forEach((c, i) => {
    out.push(`<line x1="${x(i)}" x2="${x(i)}" y1="${m.top + plotH}" y2="${m.top + plotH + 5}" stroke="#333"/>`);
    out.push(`<text x="${x(i)}" y="${m.top + plotH + 20}" text-anchor="middle">${c}</text>`);
  });
  out.push(
    `<text x="${m.left + plotW / 2}" y="${H - 14}" text-anchor="middle">concurrency (handlers running at once; evenly spaced)</text>`,
  );
  out.push(
    `<text transform="translate(20 ${m.top + plotH / 2}) rotate(-90)" text-anchor="middle">messages consumed and acked per second</text>`,
  );
  series.forEach((s, k) => {
    const color = COLORS[k % COLORS.length];
    const path = s.points.map((v, i) => `${i === 0 ? 'M' : 'L'}${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
    out.push(`<path d="${path}" fill="none" stroke="${color}" stroke-width="2.5"/>`);
    s.points.forEach((v, i) =>
      out.push(
        `<circle cx="${x(i).toFixed(1)}" cy="${y(v).toFixed(1)}" r="4" fill="${color}"><title>${escapeXml(s.system)} @ ${concurrencies[i]}: ${Math.round(v)} msg/s</title></circle>`,
      ),
    );
  });
  const legendX = W - m.right + 20;
  out.push(
    `<rect x="${legendX}" y="${m.top}" width="170" height="${series.length * 20 + 10}" fill="#ffffff" stroke="#cccccc"/>`,
  );
  series.forEach((s, k) => {
    const ly = m.top + 18 + k * 20;
    out.push(
      `<line x1="${legendX + 10}" x2="${legendX + 34}" y1="${ly - 4}" y2="${ly - 4}" stroke="${COLORS[k % COLORS.length]}" stroke-width="2.5"/>`,
    );
    out.push(`<text x="${legendX + 42}" y="${ly}">${escapeXml(s.system)}</text>`);
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

function niceCeiling(v: number): number {
  const step = 10 ** Math.floor(Math.log10(v));
  for (const f of [1, 2, 2.5, 5, 10]) if (f * step >= v) return f * step;
  return 10 * step;
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
