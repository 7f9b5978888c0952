import { drawerOpen } from '../state/view.ts';

import { Icon } from './icons.tsx';

/** Opens the conversation lists on narrow screens (hidden by CSS on wide ones). */
export function DrawerToggle() {
  return (
    <button
      type="button"
      class="icon drawer-toggle"
      aria-label="Show conversations"
      aria-expanded={drawerOpen.value}
      onClick={() => (drawerOpen.value = !drawerOpen.value)}
    >
      <Icon name="menu" />
    </button>
  );
}
