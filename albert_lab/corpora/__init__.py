"""English corpora from text already on the machine (`albert-data corpus`): the Python
documentation and docstrings (`local_corpus`), the Debian packages of prose (`prose`), a
task folder's own training texts (`task_text`), and the readers of installed packages they
share with the task folders (`debian_packages`: versions and licences; `rdata`: R's data
files)."""
