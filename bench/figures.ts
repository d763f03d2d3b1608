/** How the reports write a figure: the median over rounds, counts, fixed digits, ratios ('n/a' or '–' for none). */

/** The median of the values that are numbers; NaN for none. */
export const median = (values: number[]): number => {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const middle = sorted.length / 2;
  return Number.isInteger(middle) ? (sorted[middle - 1] + sorted[middle]) / 2 : sorted[Math.floor(middle)];
};
export const count = (n: number): string => (Number.isNaN(n) ? 'n/a' : Math.round(n).toLocaleString('en-US'));
export const fixed =
  (digits: number) =>
  (n: number): string =>
    Number.isNaN(n) ? 'n/a' : n.toFixed(digits);
export const times = (n: number): string => (Number.isNaN(n) || !Number.isFinite(n) ? '–' : `${n.toFixed(2)}×`);
