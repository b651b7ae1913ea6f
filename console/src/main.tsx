// The console's entry point: one stylesheet, one script, nothing inline (the
// hub serves this page under a CSP that allows neither).
import { render } from 'preact';
import { App } from './App';
import './styles.css';

render(<App />, document.getElementById('app')!);
