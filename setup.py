# nbdev's standard settings.ini-driven setup.py (the nbdev 2 template), with the extras cragrag needs.
from configparser import ConfigParser
import setuptools, shlex

# note: all settings are in settings.ini; edit there, not here
config = ConfigParser(delimiters=['='])
config.read('settings.ini', encoding='utf-8')
cfg = config['DEFAULT']

cfg_keys = 'version description keywords author author_email'.split()
expected = cfg_keys + "lib_name user branch license status min_python audience language".split()
for o in expected: assert o in cfg, "missing expected setting: {}".format(o)
setup_cfg = {o:cfg[o] for o in cfg_keys}

licenses = {
    'apache2': ('Apache Software License 2.0','OSI Approved :: Apache Software License'),
    'mit': ('MIT License', 'OSI Approved :: MIT License'),
    'gpl2': ('GNU General Public License v2', 'OSI Approved :: GNU General Public License v2 (GPLv2)'),
    'gpl3': ('GNU General Public License v3', 'OSI Approved :: GNU General Public License v3 (GPLv3)'),
    'bsd3': ('BSD License', 'OSI Approved :: BSD License'),
}
# settings.ini's `status` is the classifier's own number (1-7); index 0 is a placeholder, as in nbdev's template.
statuses = [ '0 - Pre-Planning', '1 - Planning', '2 - Pre-Alpha', '3 - Alpha',
    '4 - Beta', '5 - Production/Stable', '6 - Mature', '7 - Inactive' ]
py_versions = '3.11 3.12 3.13'.split()

requirements = shlex.split(cfg.get('requirements', ''))
if cfg.get('pip_requirements'): requirements += shlex.split(cfg.get('pip_requirements', ''))
min_python = cfg['min_python']
lic = licenses.get(cfg['license'].lower(), (cfg['license'], None))
dev_requirements = shlex.split(cfg.get('dev_requirements', ''))
# Extras beyond nbdev's template: the production model stack and the HTTP server.
# FlagEmbedding 1.4.2 needs transformers 4.x (5.x fails to import); install torch==2.13.0 first for a CPU build.
bge_requirements = ['FlagEmbedding==1.4.2', 'transformers>=4.44.2,<5', 'sentence-transformers<6', 'datasets<5', 'torch']
server_requirements = ['fastapi>=0.110', 'uvicorn>=0.27', 'httpx>=0.27', 'fastapi-offline>=1.7', 'fonttools>=4.40', 'brotli>=1.1']   # fastapi-offline: Swagger UI and ReDoc assets served locally (no CDN); fonttools + brotli: the question page's Korean font, cut and compressed (woff2)
langgraph_requirements = ['langgraph>=0.2']   # the course graph built from cragrag's nodes (optional)
# bench/peers.py only: the retrieval stacks cragrag is measured against (never imported by the package)
peers_requirements = ['langchain-community>=0.4', 'langchain-classic>=1.0', 'langchain-qdrant>=1.1', 'rank_bm25>=0.2.2',
                      'llama-index-core>=0.14', 'llama-index-retrievers-bm25>=0.8', 'bm25s>=0.3']

setuptools.setup(
    name = cfg['lib_name'],
    license = lic[0],
    classifiers = [
        'Development Status :: ' + statuses[int(cfg['status'])],
        'Intended Audience :: ' + cfg['audience'].title(),
        'Natural Language :: ' + cfg['language'].title(),
    ] + ['Programming Language :: Python :: '+o for o in py_versions[py_versions.index(min_python):]] + (['License :: ' + lic[1] ] if lic[1] else []),
    url = cfg['git_url'],
    packages = setuptools.find_packages(include=[cfg['lib_path'], cfg['lib_path'] + '.*']),
    include_package_data = True,
    package_data = {cfg['lib_path']: ['corpus/*', 'corpus/*/*', 'data/*', 'data/*/*']},
    install_requires = requirements,
    extras_require = {'dev': dev_requirements, 'bge': bge_requirements, 'server': server_requirements, 'langgraph': langgraph_requirements,
                      'peers': peers_requirements},
    dependency_links = cfg.get('dep_links','').split(),
    python_requires  = '>=' + cfg['min_python'],
    long_description = open('README.md', encoding='utf-8').read(),
    long_description_content_type = 'text/markdown',
    zip_safe = False,
    entry_points = {
        'console_scripts': cfg.get('console_scripts','').split(),
        'nbdev': [f'{cfg.get("lib_path")}={cfg.get("lib_path")}._modidx:d']
    },
    **setup_cfg)
