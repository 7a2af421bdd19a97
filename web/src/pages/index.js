// The pages, in tab order. Each module registers itself (registry.js) with
// its id, URL hash, tab label, translations and hooks; adding a page is one
// file under pages/ and one line here.

import './overview.js';
import './jobs.js';
import './logs.js';
import './alerts.js';
import './inbox.js';
import './actions.js';
import './settings.js';
