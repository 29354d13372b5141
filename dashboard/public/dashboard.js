// The dashboard's only script (the Content-Security-Policy allows no other):
// copy buttons of secrets shown once, confirmation of destructive forms,
// a session's page reloading itself while its invocations run, and the Menu
// button of narrow windows.
// Every page works without it.
(function () {
  'use strict';

  function announce(id, text) {
    var status = document.querySelector('[data-copy-status="' + id + '"]');
    if (status) status.textContent = text;
  }

  function copyFallback(input) {
    input.focus();
    input.select();
    try {
      return document.execCommand('copy');
    } catch {
      return false;
    }
  }

  document.addEventListener('click', function (event) {
    var button = event.target.closest('[data-copy]');
    if (!button) return;
    var id = button.getAttribute('data-copy');
    var input = document.getElementById(id);
    if (!input) return;
    var done = function () {
      button.textContent = 'Copied';
      announce(id, 'Copied to the clipboard.');
      window.setTimeout(function () {
        button.textContent = 'Copy';
      }, 2000);
    };
    var failed = function () {
      announce(id, copyFallback(input) ? 'Copied to the clipboard.' : 'Select the text and copy it with your keyboard.');
    };
    if (window.navigator.clipboard && window.isSecureContext) {
      window.navigator.clipboard.writeText(input.value).then(done, failed);
    } else if (copyFallback(input)) {
      done();
    } else {
      failed();
    }
  });

  document.addEventListener('submit', function (event) {
    var question = event.target.getAttribute('data-confirm');
    if (question && !window.confirm(question)) event.preventDefault();
  });

  // A session's page whose invocations are still running reloads itself to
  // show their results: every 2 s for a minute at most, and never once the
  // reader types in a form (what they typed would be lost).
  function reloadWhileRunning() {
    var key = 'didyma-reloads:' + window.location.pathname;
    var watched = document.querySelector('[data-reload-while-running]');
    var count = Number(window.sessionStorage.getItem(key) || '0');
    if (!watched || count >= 30) {
      if (!watched) window.sessionStorage.removeItem(key);
      return;
    }
    var timer = window.setTimeout(function () {
      window.sessionStorage.setItem(key, String(count + 1));
      window.location.reload();
    }, 2000);
    document.addEventListener('input', function () {
      window.clearTimeout(timer);
    });
  }
  reloadWhileRunning();

  // In a narrow window the sections fold behind the Menu button; the
  // stylesheet hides them only once this has run, so they stay reachable
  // without script.
  function sectionsMenu() {
    var button = document.querySelector('[data-menu]');
    var nav = button && document.getElementById(button.getAttribute('aria-controls'));
    if (!nav) return;
    document.documentElement.classList.add('menu-ready');
    button.addEventListener('click', function () {
      var open = button.getAttribute('aria-expanded') !== 'true';
      button.setAttribute('aria-expanded', String(open));
      nav.classList.toggle('open', open);
    });
  }
  sectionsMenu();
})();
