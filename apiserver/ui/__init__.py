"""The browser view's static files (index.html, app.js, app.css), served by `apiserver.endpoints.ui`."""
