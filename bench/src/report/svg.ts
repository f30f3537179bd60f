/** A small dependency-free SVG chart: panels of horizontal bars, each panel on its own linear scale. */
export type Bar = { label: string; value: number; color: string; note?: string };
export type Panel = { title: string; unit: string; bars: Bar[] };

const escapeXml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const fmt = (n: number) =>
  Math.abs(n) >= 100 ? Math.round(n).toLocaleString('en-US') : String(Math.round(n * 100) / 100);

export const COLORS = {
  direct: '#9aa0a6',
  portkey: '#e37400',
  ours: '#1a73e8',
  oursBefore: '#a8c7fa',
  /** Ours in a second configuration of the same run (peers --variant-env). */
  variant: '#0b8043',
};

/** Renders `panels` stacked vertically under `title` and `subtitle` lines. */
export function renderBarChart(title: string, subtitle: string[], panels: Panel[]): string {
  const width = 760;
  const labelW = 170;
  const valueW = 150;
  const barMax = width - labelW - valueW - 20;
  const barH = 20;
  const gap = 6;
  const out: string[] = [];
  let y = 28;
  out.push(
    `<text x="10" y="${y}" font-size="16" font-weight="bold">${escapeXml(title)}</text>`,
    ...subtitle.map((line) => {
      y += 18;
      return `<text x="10" y="${y}" font-size="12" fill="#555">${escapeXml(line)}</text>`;
    }),
  );
  y += 14;
  for (const panel of panels) {
    y += 22;
    out.push(`<text x="10" y="${y}" font-size="13" font-weight="bold">${escapeXml(panel.title)}</text>`);
    y += 8;
    const max = Math.max(...panel.bars.map((b) => Math.abs(b.value)), 1e-9);
    for (const bar of panel.bars) {
      const w = Math.max(1, (Math.abs(bar.value) / max) * barMax);
      out.push(
        `<text x="${labelW - 8}" y="${y + barH - 6}" font-size="12" text-anchor="end">${escapeXml(bar.label)}</text>`,
        `<rect x="${labelW}" y="${y}" width="${w.toFixed(1)}" height="${barH}" fill="${bar.color}"/>`,
        `<text x="${labelW + w + 6}" y="${y + barH - 6}" font-size="12">${escapeXml(`${fmt(bar.value)} ${panel.unit}${bar.note ? ` ${bar.note}` : ''}`)}</text>`,
      );
      y += barH + gap;
    }
  }
  y += 12;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${y}" viewBox="0 0 ${width} ${y}" font-family="Helvetica, Arial, sans-serif">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    ...out,
    '</svg>',
    '',
  ].join('\n');
}
