"""Package metadata, read from `settings.ini` (the nbdev 2 convention)."""

from configparser import ConfigParser
import setuptools, shlex


config = ConfigParser(delimiters=['='])
config.read('settings.ini', encoding='utf-8')
cfg = config['DEFAULT']

licenses = {'apache2': ('Apache Software License 2.0', 'OSI Approved :: Apache Software License')}
statuses = ['Pre-Alpha', 'Alpha', 'Beta', 'Production/Stable', 'Mature', 'Inactive']
py_versions = '3.10 3.11 3.12 3.13'.split()

lic = licenses[cfg['license'].lower()]
min_python = cfg['min_python']
requirements = shlex.split(cfg.get('requirements', ''))
extras = {k: shlex.split(cfg.get(f'{k}_requirements', '')) for k in ('lab', 'flower', 'ray')}
extras['dev'] = sorted({*shlex.split(cfg.get('dev_requirements', '')), *(r for k in ('lab', 'flower', 'ray') for r in extras[k])})

setuptools.setup(
    name=cfg['lib_name'], version=cfg['version'], license=lic[0],
    classifiers=['Development Status :: ' + statuses[int(cfg['status'])],
                 'Intended Audience :: ' + cfg['audience'].title(),
                 'License :: ' + lic[1], 'Natural Language :: ' + cfg['language'].title()]
                + ['Programming Language :: Python :: ' + o for o in py_versions[py_versions.index(min_python):]],
    url=cfg['git_url'], packages=setuptools.find_packages(include=[cfg['lib_name'], cfg['lib_name'] + '.*']),
    include_package_data=True, install_requires=requirements,
    extras_require=extras,
    python_requires='>=' + min_python,
    long_description=open('README.md', encoding='utf-8').read(), long_description_content_type='text/markdown',
    zip_safe=False,
    entry_points={'console_scripts': cfg.get('console_scripts', '').split(),
                  'nbdev': [f'{cfg.get("lib_path")}={cfg.get("lib_path")}._modidx:d']},
    author=cfg['author'], author_email=cfg['author_email'], description=cfg['description'],
    keywords=cfg['keywords'],
)
