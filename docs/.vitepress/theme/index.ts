// The default theme, with the few style changes of custom.css.
import DefaultTheme from 'vitepress/theme';
import './custom.css';

export default DefaultTheme;
