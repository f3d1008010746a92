// The build failed for the right reason: the kit named the rule and its VIRTIO section.
def log = new File(basedir, 'build.log').text
assert log.contains('contract rule NO_LOST_NOTIFICATION broken (VIRTIO 1.2 section 2.7.7.2') :
        'the broken copy did not fail naming NO_LOST_NOTIFICATION and section 2.7.7.2'
assert log.contains('without a decision') : 'the failure does not say what was lost'
return true
