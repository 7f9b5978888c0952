import { signal } from '@preact/signals';

// Light, dark, or as the system says; kept in this browser.

export type Theme = 'system' | 'light' | 'dark';
const KEY = 'svc.theme';

export const theme = signal<Theme>(read());

function read(): Theme {
  const v = localStorage.getItem(KEY);
  return v === 'light' || v === 'dark' ? v : 'system';
}

export function applyTheme(): void {
  const t = theme.value;
  if (t === 'system') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = t;
}

export function setTheme(t: Theme): void {
  theme.value = t;
  if (t === 'system') localStorage.removeItem(KEY);
  else localStorage.setItem(KEY, t);
  applyTheme();
}
