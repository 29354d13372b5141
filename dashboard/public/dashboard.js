// The dashboard's only script (the Content-Security-Policy allows no other):
// copy buttons of secrets shown once, and confirmation of destructive forms.
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
})();
