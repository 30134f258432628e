// Written over an exercise's babel.config.js by the judge: Debian's babel preset-env
// instead of the npm-only @exercism/babel-preset-javascript.
module.exports = {
  presets: [['@babel/preset-env', { targets: { node: 'current' } }]],
};
