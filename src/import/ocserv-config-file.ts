/** One `key = value` line of an ocserv configuration file (ocserv.conf, config-per-group/-user files). */
export interface OcservOption {
  key: string;
  value: string;
  line: number;
}

/**
 * ocserv's configuration syntax: `key = value` per line, keys repeatable (route, dns, ...),
 * `#` starts a comment line, blank lines ignored, a value may be in double quotes. Lines
 * without `=` are returned as problems (ocserv refuses to start on them).
 */
export function parseOcservConfig(text: string): { options: OcservOption[]; problems: string[] } {
  const options: OcservOption[] = [];
  const problems: string[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    const eq = line.indexOf("=");
    if (eq <= 0) {
      problems.push(`line ${index + 1}: "${line.slice(0, 60)}" is not key = value`);
      return;
    }
    const key = line.slice(0, eq).trim().toLowerCase();
    let value = line.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    options.push({ key, value, line: index + 1 });
  });
  return { options, problems };
}
