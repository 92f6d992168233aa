/** One line of an ocpasswd file: `user:group1,group2:hash`; a hash starting with `!` is locked. */
export interface OcpasswdEntry {
  name: string;
  groups: string[];
  hash: string;
  locked: boolean;
}

/**
 * Parses ocpasswd's format. ocpasswd writes a name holding ':' as it is (`ocpasswd -c F 'a:b'`
 * gives `a:b:*:$5$...`); the group and hash fields hold no ':', so they are the last two fields
 * and the name is the rest.
 */
export function parseOcpasswd(text: string): { entries: OcpasswdEntry[]; problems: string[] } {
  const entries: OcpasswdEntry[] = [];
  const problems: string[] = [];
  text.split(/\r?\n/).forEach((line, index) => {
    if (line.trim() === "" || line.startsWith("#")) return;
    const parts = line.split(":");
    const hash = parts.pop();
    const groupText = parts.pop();
    const name = parts.join(":");
    if (hash === undefined || groupText === undefined || name === "" || hash === "") {
      problems.push(`line ${index + 1}: not user:groups:hash`);
      return;
    }
    const groups = groupText === "*" || groupText === "" ? [] : groupText.split(",").map((g) => g.trim()).filter(Boolean);
    entries.push({ name, groups, hash, locked: hash.startsWith("!") });
  });
  return { entries, problems };
}
