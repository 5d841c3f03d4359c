"""Every finding id the tool can produce, declared with its cause, layer and severity.

One module per producer (``cuda.py`` declares what core/judgement/checks/cuda.py makes, ...), listed in
``registry.py``. ``core.texts.make_finding`` refuses an id that is not declared here, and
tests/test_finding_ids.py checks the declarations against the code and the text catalog
(resources/texts/*.json): every declared id has its texts in English and Korean, every text
has a declared id, and every id is written out in full where it is made (one search finds
its code).

To add a finding: declare it in the module of its producer, write its texts, make it with
``make_finding("<the id, written out>", ...)``.
"""
