export function queryOf(url: URL): Record<string, string> {
  const q: Record<string, string> = {};
  for (const [k, v] of url.searchParams) q[k] = v;
  return q;
}
