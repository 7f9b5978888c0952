import { render } from 'preact';

import { App } from './app.tsx';
import { applyTheme } from './ui/theme.ts';

applyTheme();
render(<App />, document.getElementById('app') as HTMLElement);
