/** Micro-units of a currency as money: 1,234,567 micro-units of USD -> "$1.2346". */
export function formatMoney(micros: number, currency: string): string {
  const units = micros / 1_000_000;
  try {
    return units.toLocaleString('en-US', {
      style: 'currency',
      currency,
      minimumFractionDigits: 2,
      maximumFractionDigits: units !== 0 && Math.abs(units) < 1 ? 6 : 2,
    });
  } catch {
    return `${units.toFixed(6)} ${currency}`;
  }
}
