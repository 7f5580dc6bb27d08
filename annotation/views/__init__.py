"""What both faces share, and the site's own pages: the one-item page context
(``task_page``), the home page and the account pages. The participant's pages are in
``annotation.participation.views``, the researchers' in ``annotation.research.views``;
this package imports neither."""
