import { render } from 'preact';

import { App } from './app.tsx';
import { applyTheme } from './ui/theme.ts';
import { registerServiceWorker } from './state/push.ts';

applyTheme();
render(<App />, document.getElementById('app') as HTMLElement);
// Notifications while away and the app shell offline; asks no permission.
void registerServiceWorker();
