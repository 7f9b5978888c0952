import { Component, h, type FunctionComponent } from 'preact';

/** Renders `inner` again only when a prop changed by identity (Preact's memo without compat). */
export function memo<P extends object>(inner: FunctionComponent<P>): FunctionComponent<P> {
  class Memo extends Component<P> {
    override shouldComponentUpdate(next: P): boolean {
      const prev = this.props as Record<string, unknown>;
      const n = next as Record<string, unknown>;
      for (const k in n) if (n[k] !== prev[k]) return true;
      for (const k in prev) if (!(k in n)) return true;
      return false;
    }
    override render() {
      return h(inner, this.props);
    }
  }
  return Memo as unknown as FunctionComponent<P>;
}
