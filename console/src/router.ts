import { useEffect, useState } from 'preact/hooks';

/*
 * The console's pages are addressed in the URL's fragment (#/vaults/vlt_...), which never
 * reaches the server: a page is a bookmark, and no id or key appears in a request line.
 */

export function useRoute(): string[] {
  const read = (): string[] => location.hash.replace(/^#\/?/, '').split('/').filter(Boolean);
  const [parts, setParts] = useState(read);
  useEffect(() => {
    const onChange = (): void => {
      setParts(read());
    };
    addEventListener('hashchange', onChange);
    return () => {
      removeEventListener('hashchange', onChange);
    };
  }, []);
  return parts;
}

export function go(path: string): void {
  location.hash = `#/${path}`;
}
