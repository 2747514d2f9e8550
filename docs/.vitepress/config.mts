// The documentation site: `npm run docs` serves it, `npm run docs:build` builds it into
// docs/.vitepress/dist. Both run scripts/docs-reference.mjs first, which writes the REST reference
// (docs/reference/rest/) and the fragments the pages include (docs/.generated/). A link to a page
// that does not exist fails the build (VitePress's dead-link check, left on).
import { existsSync, readFileSync } from 'node:fs';
import { defineConfig, type DefaultTheme } from 'vitepress';

const restSidebarFile = new URL('../.generated/rest-sidebar.json', import.meta.url);
if (!existsSync(restSidebarFile)) throw new Error('docs/.generated is missing: build the site with `npm run docs:build` (or serve it with `npm run docs`), which write the reference first');
const restPages = JSON.parse(readFileSync(restSidebarFile, 'utf8')) as DefaultTheme.SidebarItem[];

const sidebar: DefaultTheme.SidebarItem[] = [
  { text: 'Getting started', link: '/getting-started' },
  { text: 'Schedules and time', link: '/schedules' },
  { text: 'Runs, retries and dead letters', link: '/runs' },
  { text: 'Steps', link: '/steps' },
  { text: 'Durable functions', link: '/durable-functions' },
  { text: 'Events and flow control', link: '/events' },
  { text: 'Sensors', link: '/sensors' },
  { text: 'Concurrency', link: '/concurrency' },
  { text: 'Priority and fair share', link: '/priority' },
  { text: 'Alerts and deadlines', link: '/alerts' },
  { text: 'Schedules as code', link: '/schedules-as-code' },
  { text: 'The SDK', link: '/sdk' },
  { text: 'The CLI', link: '/cli' },
  { text: 'The dashboard', link: '/dashboard' },
  {
    text: 'Operations',
    items: [
      { text: 'Deploying', link: '/operations/deploying' },
      { text: 'Deploying new code', link: '/operations/deploying-new-code' },
      { text: 'Production engines and scaling', link: '/operations/engines' },
      { text: 'Retention', link: '/operations/retention' },
      { text: 'Observability', link: '/operations/observability' },
      { text: 'Configuration', link: '/operations/configuration' },
    ],
  },
  { text: 'Security', link: '/security' },
  { text: 'Benchmark', link: '/benchmark' },
  {
    text: 'Reference',
    items: [
      { text: 'Architecture', link: '/reference/architecture' },
      { text: 'REST API', link: '/reference/rest-api', collapsed: true, items: restPages },
      { text: 'GraphQL', link: '/reference/graphql' },
      { text: 'Reason codes', link: '/reference/reason-codes' },
      { text: 'Domain events', link: '/reference/domain-events' },
      { text: 'Developing Kairos', link: '/reference/development' },
    ],
  },
];

export default defineConfig({
  title: 'Kairos',
  description: 'A durable, distributed scheduler for services and agents.',
  lang: 'en',
  cleanUrls: true,
  lastUpdated: false,
  // Everything the site needs is in the build: no font, script or search index from elsewhere.
  themeConfig: {
    nav: [
      { text: 'Guide', link: '/getting-started' },
      { text: 'Operations', link: '/operations/deploying' },
      { text: 'Reference', link: '/reference/rest-api' },
    ],
    sidebar,
    outline: { level: [2, 3] },
    search: { provider: 'local' },
  },
  markdown: {
    config(md) {
      // Inline code is shown as written: `{{payload.customerId}}` is a template of Kairos, not of Vue.
      const inline = md.renderer.rules.code_inline!;
      md.renderer.rules.code_inline = (tokens, idx, options, env, self) => inline(tokens, idx, options, env, self).replace(/^<code/, '<code v-pre');
    },
  },
});
